import { Duration } from 'aws-cdk-lib';
import { DYNAMODB_MAX_ATTEMPTS, DYNAMODB_REQUEST_TIMEOUT_MS } from '../shared/dynamodb';

/**
 * The time budget of one request, innermost first. Each layer must give up before the one around it,
 * so a slow table surfaces as our 503 Error body (the SDK's error, mapped by the handler) rather than
 * a Lambda timeout, which API Gateway would turn into its own 500/503 `{"message": ...}` body.
 */

/** API Gateway's hard limit for an HTTP API integration (not adjustable). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 30_000;
/** API Gateway's hard limit for an HTTP API Lambda authorizer's answer (not adjustable). */
export const API_GATEWAY_AUTHORIZER_TIMEOUT_MS = 10_000;

/**
 * Upper bound of the SDK's standard retry backoff for throttling errors: `random × base × 2^retry`,
 * base 1 s (@smithy/core's 2026 retry defaults; transient errors use 50 ms). Throttling is the slow case.
 */
const THROTTLING_BACKOFF_BASE_MS = 1_000;

/**
 * The longest one DynamoDB call can take before the SDK gives up: every attempt may spend the
 * connection timeout and then the request (socket idle) timeout, plus the longest backoff between
 * attempts. With 3 attempts of 1 s + 1 s and backoffs of at most 1 s and 2 s, that is 9 s. Every
 * handler makes at most one such call that can be slow: a failing call ends the request with a 503.
 */
export function dynamoDbCallBudgetMs(): number {
  const perAttempt = 2 * DYNAMODB_REQUEST_TIMEOUT_MS;
  const backoff = THROTTLING_BACKOFF_BASE_MS * (2 ** (DYNAMODB_MAX_ATTEMPTS - 1) - 1);
  return DYNAMODB_MAX_ATTEMPTS * perAttempt + backoff;
}

/**
 * Every function's timeout. Above the SDK budget, so the handler always gets the SDK's error and
 * answers with our Error body; at most the authorizer's 10 s limit (the tighter of API Gateway's two
 * limits), so neither the authorizer nor a route function is cut off by API Gateway first.
 */
export const FUNCTION_TIMEOUT = Duration.seconds(10);

/** Throws when the SDK settings in shared/dynamodb.ts no longer fit inside the function timeout. */
export function assertTimeBudget(): void {
  const sdk = dynamoDbCallBudgetMs();
  const fn = FUNCTION_TIMEOUT.toMilliseconds();
  if (!(sdk < fn && fn <= API_GATEWAY_AUTHORIZER_TIMEOUT_MS && fn < API_GATEWAY_INTEGRATION_TIMEOUT_MS)) {
    throw new Error(
      `Inconsistent time budget: the DynamoDB SDK may take ${sdk} ms, the functions time out after ${fn} ms, ` +
        `API Gateway waits ${API_GATEWAY_AUTHORIZER_TIMEOUT_MS} ms for the authorizer and ` +
        `${API_GATEWAY_INTEGRATION_TIMEOUT_MS} ms for an integration.`,
    );
  }
}
