import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { StoreUnavailableError } from './store-errors';

/**
 * SDK time budget. Connecting and each request attempt give up after 1 s; three attempts with
 * backoff end within 9 s, inside the functions' 10 s timeout (infra/time-budget.ts checks this at
 * synthesis), so a slow table becomes our 503, not a Lambda timeout.
 */
export const DYNAMODB_REQUEST_TIMEOUT_MS = 1_000;
export const DYNAMODB_MAX_ATTEMPTS = 3;

/** Creates the document client; call once per function instance, at module scope. */
export function createDocumentClient(): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    maxAttempts: DYNAMODB_MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: DYNAMODB_REQUEST_TIMEOUT_MS, requestTimeout: DYNAMODB_REQUEST_TIMEOUT_MS },
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);
const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, $metadata } = error as Error & { code?: string; $metadata?: { httpStatusCode?: number } };
  return (
    UNAVAILABLE_ERROR_NAMES.has(error.name) ||
    (code !== undefined && NETWORK_ERROR_CODES.has(code)) ||
    ($metadata?.httpStatusCode ?? 0) >= 500
  );
}

/** Runs a store operation, turning throttling and outages into StoreUnavailableError. */
export async function callStore<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw isUnavailable(error) ? new StoreUnavailableError(error) : error;
  }
}
