/**
 * The service's error vocabulary. Every error a client can see is one of these codes, and
 * shared/http/responses.ts is the single place that maps what was thrown to one (`toApiError`: these
 * classes as they are, the domain's errors to theirs) and to the `{ code, message, status }` body
 * (`errorResponse`). The codes are part of the public contract: add, never rename.
 */
export const ERROR_CODES = {
  invalid_body: 400,
  invalid_parameter: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error whose message is safe to show to the client. */
export class ApiError extends Error {
  readonly status: number;
  /** Extra response headers the error requires (`Allow`, `WWW-Authenticate`, `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.status = ERROR_CODES[code];
    this.headers = headers;
  }
}

/** The body is missing, is not JSON, or is not a JSON object. */
export class InvalidBodyError extends ApiError {
  constructor(message: string) {
    super('invalid_body', message);
  }
}

/** A body field, path or query parameter is present but invalid, or is not part of the contract. */
export class InvalidParameterError extends ApiError {
  constructor(message: string) {
    super('invalid_parameter', message);
  }
}

export type UnauthorizedReason = 'missing' | 'invalid';

/** No usable API key. `WWW-Authenticate` follows RFC 6750 §3. */
export class UnauthorizedError extends ApiError {
  constructor(reason: UnauthorizedReason) {
    super(
      'unauthorized',
      reason === 'missing'
        ? 'An API key is required: send it as "Authorization: Bearer <API key>".'
        : 'The API key is invalid or has been revoked.',
      {
        'www-authenticate':
          reason === 'missing' ? 'Bearer realm="animal-store"' : 'Bearer realm="animal-store", error="invalid_token"',
      },
    );
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'The requested resource could not be found.') {
    super('not_found', message);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(method: string, allowed: readonly string[]) {
    super('method_not_allowed', `${method} is not allowed here; use ${allowed.join(' or ')}.`, {
      allow: allowed.join(', '),
    });
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super('payload_too_large', `The request body must not exceed ${limitBytes} bytes.`);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor(message = 'The request body must be sent as "Content-Type: application/json".') {
    super('unsupported_media_type', message);
  }
}

/** A dependency is throttling or unreachable: the client may retry after `retryAfterSeconds`. */
export class ServiceUnavailableError extends ApiError {
  constructor(retryAfterSeconds = 1) {
    super('service_unavailable', 'The service is temporarily unavailable; retry shortly.', {
      'retry-after': String(retryAfterSeconds),
    });
  }
}

export class InternalError extends ApiError {
  constructor() {
    super('internal_error', 'The service failed to process the request.');
  }
}
