/**
 * The time budget of one request, innermost first. Each layer must give up before the one around it,
 * so a slow table surfaces as our 503 Error body rather than a Lambda timeout, which API Gateway
 * would turn into its own `{"message": ...}` body. Plain numbers, no CDK: the stack deploys them
 * (infra/api-function.ts checks them at synthesis) and the local runtime enforces them (local/).
 *
 * The layers: one DynamoDB attempt (1 s, shared/dynamodb/dynamodb-client.ts) → one call with its retries →
 * the invocation's deadline, the Lambda timeout minus a reserve (shared/runtime/deadline.ts), which ends
 * every call still running however many a request makes → the Lambda timeout → API Gateway's limits.
 */

/** API Gateway's hard limit for an HTTP API integration (not adjustable). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 30_000;
/** API Gateway's hard limit for an HTTP API Lambda authorizer's answer (not adjustable). */
export const API_GATEWAY_AUTHORIZER_TIMEOUT_MS = 10_000;

/**
 * Every function's timeout. A single slow call fits inside it with room to answer, so the common
 * case (one store call per request) ends with the SDK's own error; a request making several calls
 * (createPet with an Idempotency-Key makes up to four) is cut by the deadline instead. At most the
 * authorizer's 10 s limit, so neither the authorizer nor a route is cut off by API Gateway first.
 */
export const FUNCTION_TIMEOUT_MS = 10_000;
