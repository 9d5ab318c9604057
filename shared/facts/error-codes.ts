/**
 * Every error code a client can see, with the HTTP status it always has. Part of the public contract:
 * add, never rename (docs/error-codes.md).
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
