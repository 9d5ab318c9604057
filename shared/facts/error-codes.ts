/**
 * The service's error vocabulary: every error a client can see is one of these codes, with the HTTP
 * status it always has. The codes are part of the public contract: add, never rename. A plain fact,
 * so the route table can name each operation's errors; shared/http/errors.ts raises them and
 * shared/http/responses.ts maps what was thrown to one, in one place.
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
