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
