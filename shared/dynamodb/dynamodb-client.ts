import type { IncomingMessage } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ConfiguredRetryStrategy } from '@smithy/util-retry';
import { deadlineSignal } from '../runtime/deadline';
import { StoreUnavailableError } from '../domain/store-errors';

/**
 * How long one attempt, connecting and reading the body included, may take: DynamoDB answers a
 * single-item request far sooner, so an attempt still open is stuck. Checked against the function timeout at synthesis.
 */
export const DYNAMODB_ATTEMPT_TIMEOUT_MS = 1_000;
export const DYNAMODB_MAX_ATTEMPTS = 3;
/**
 * Wait before the n-th retry: shorter than the SDK's jittered default, since a client is waiting and its
 * 503's Retry-After moves further backing off to it.
 */
export function dynamoDbRetryDelayMs(retry: number): number {
  return 100 * 2 ** (retry - 1);
}

/**
 * The longest one DynamoDB call can take before the SDK gives up on its own: every attempt may spend
 * the whole attempt timeout, plus the backoff between attempts.
 */
export function dynamoDbCallBudgetMs(): number {
  let budget = DYNAMODB_MAX_ATTEMPTS * DYNAMODB_ATTEMPT_TIMEOUT_MS;
  for (let retry = 1; retry < DYNAMODB_MAX_ATTEMPTS; retry++) budget += dynamoDbRetryDelayMs(retry);
  return budget;
}

/**
 * The SDK's Node.js handler, with its attempt timeout extended to the answer's body: its own timeouts end
 * at the answer's head or only when idle, so a dripping body would hold the call until the deadline. The
 * body is destroyed with a TimeoutError, which the SDK retries like any timed-out attempt.
 */
class AttemptBoundedHttpHandler extends NodeHttpHandler {
  override async handle(...args: Parameters<NodeHttpHandler['handle']>): ReturnType<NodeHttpHandler['handle']> {
    const startedAt = Date.now();
    const answer = await super.handle(...args);
    const body = answer.response.body as IncomingMessage;
    // Ends only a body that has not arrived: one received whole but not yet read (the SDK reads it
    // after its middleware) is no stuck answer.
    const left = Math.max(0, DYNAMODB_ATTEMPT_TIMEOUT_MS - (Date.now() - startedAt));
    const timer = setTimeout(() => body.complete || body.destroy(bodyTimeoutError()), left);
    body.once('close', () => clearTimeout(timer));
    return answer;
  }
}

function bodyTimeoutError(): Error {
  const error = new Error(`The answer's body did not arrive within the attempt timeout of ${DYNAMODB_ATTEMPT_TIMEOUT_MS} ms`);
  error.name = 'TimeoutError';
  return error;
}

/** The document client our stores use; call once per function instance, at module scope. */
export function createDocumentClient(): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    retryStrategy: new ConfiguredRetryStrategy(DYNAMODB_MAX_ATTEMPTS, dynamoDbRetryDelayMs),
    requestHandler: new AttemptBoundedHttpHandler({
      connectionTimeout: DYNAMODB_ATTEMPT_TIMEOUT_MS,
      requestTimeout: DYNAMODB_ATTEMPT_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    }),
  });
  return endAtDeadline(documentClientOver(client));
}

/**
 * A document client over any DynamoDB client, marshalling as the functions' does (undefined attributes
 * dropped, not refused), for the tools, the local runtime and the tests.
 */
export function documentClientOver(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

type Sendable = { send(command: never, options?: { abortSignal?: AbortSignal }): Promise<unknown> };

/**
 * Bounds every `send` by the invocation's deadline: a call that could outlive it carries it as its abort
 * signal, which the SDK honours across attempts and backoff; one that ends on its own first carries none,
 * since a signal costs every attempt.
 */
function endAtDeadline<TClient extends Sendable>(client: TClient): TClient {
  const send = client.send.bind(client) as (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;
  const callBudgetMs = dynamoDbCallBudgetMs();
  const bounded = (command: unknown, options?: { abortSignal?: AbortSignal }) => {
    const deadline = deadlineSignal(callBudgetMs);
    if (deadline === undefined) return send(command, options);
    const abortSignal = options?.abortSignal === undefined ? deadline : AbortSignal.any([deadline, options.abortSignal]);
    return send(command, { ...options, abortSignal });
  };
  return Object.assign(client, { send: bounded });
}

const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  // The invocation's deadline passed (shared/runtime/deadline.ts).
  'AbortError',
]);
const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether an error means DynamoDB is throttling, slow or unreachable, rather than a bug of ours. An answer
 * that is not JSON (a SyntaxError with `$response`) counts: something between us and DynamoDB is broken.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, $metadata } = error as Error & { code?: string; $metadata?: { httpStatusCode?: number } };
  return (
    UNAVAILABLE_ERROR_NAMES.has(error.name) ||
    (error.name === 'SyntaxError' && '$response' in error) ||
    (code !== undefined && NETWORK_ERROR_CODES.has(code)) ||
    ($metadata?.httpStatusCode ?? 0) >= 500
  );
}

/** Runs a store operation, turning throttling and outages into StoreUnavailableError. */
export async function callStore<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw isStoreUnavailable(error) ? new StoreUnavailableError(error) : error;
  }
}
