/**
 * The time budget of one request. Each layer (DynamoDB attempt, call, invocation deadline, Lambda timeout,
 * API Gateway) gives up before the one around it, so a slow table is our 503, not API Gateway's own body.
 */

/** API Gateway's hard limit for an HTTP API integration (not adjustable). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 30_000;
/** API Gateway's hard limit for an HTTP API Lambda authorizer's answer (not adjustable). */
export const API_GATEWAY_AUTHORIZER_TIMEOUT_MS = 10_000;

/**
 * Every function's timeout: one slow store call fits inside it with room to answer, and it is at most the
 * authorizer's limit, so API Gateway cuts off neither the authorizer nor a route first.
 */
export const FUNCTION_TIMEOUT_MS = 10_000;

/** Lambda's own limit on starting a new instance (INIT): a direct invocation of a cold version may wait through it first. */
export const LAMBDA_INIT_LIMIT_MS = 10_000;

/**
 * How long a direct invocation of one of the API's functions may take, as the pre-traffic hook's checks and the
 * deployment traffic make them: a cold start at its limit, the function's whole timeout, and the network.
 */
export const DIRECT_INVOCATION_LIMIT_MS = LAMBDA_INIT_LIMIT_MS + FUNCTION_TIMEOUT_MS + 5_000;

/** How long one CodeDeploy call may take, the SDK's retries included. */
export const CODEDEPLOY_CALL_LIMIT_MS = 10_000;
