import type { components } from './api-types.js';

/** The API's error codes: the Error body's `code`, stable and meant for programs. */
export type ErrorCode = components['schemas']['Error']['code'];

/**
 * An answer that was not a success, after any retries. `code` is the Error body's; it is undefined when API Gateway
 * answered itself (429 when throttled, 413, or a function that failed to answer), whose body has only a `message`.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: ErrorCode | undefined;
  /** The answer's body as sent: the Error body, API Gateway's own, or text that is neither. */
  readonly body: unknown;
  /** The answer's `apigw-requestid`, which finds the request in the API's access log: quote it to its operators. */
  readonly requestId: string | undefined;

  constructor(status: number, body: unknown, requestId: string | undefined) {
    const { code, message } = readBody(body);
    super(message ?? `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.body = body;
    this.requestId = requestId;
  }
}

function readBody(body: unknown): { code?: ErrorCode; message?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const { code, message } = body as Record<string, unknown>;
  return {
    ...(typeof code === 'string' ? { code: code as ErrorCode } : {}),
    ...(typeof message === 'string' ? { message } : {}),
  };
}
