import { ERROR_CODES, type ErrorCode } from '../facts/error-codes';

/**
 * The HTTP adapter's errors, each with one code of shared/facts/error-codes.ts; shared/http/responses.ts
 * is the one place that maps what was thrown to them and to the Error body.
 */

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
        'www-authenticate': reason === 'missing' ? 'Bearer realm="animal-store"' : 'Bearer realm="animal-store", error="invalid_token"',
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
