/**
 * What can go wrong with an Idempotency-Key, in the domain's words; shared/http/responses.ts maps them
 * to 409 and 422. A module of their own, so that mapping them bundles no store code.
 */

/** A request with the same key is still being processed; the client should retry shortly. */
export class IdempotencyKeyInUseError extends Error {
  constructor(options?: ErrorOptions) {
    super('A request with this Idempotency-Key is still in progress', options);
    this.name = 'IdempotencyKeyInUseError';
  }
}

/** The key was used before for a different request: replaying that answer would be a lie. */
export class IdempotencyKeyReusedError extends Error {
  constructor(options?: ErrorOptions) {
    super('This Idempotency-Key was used for a different request', options);
    this.name = 'IdempotencyKeyReusedError';
  }
}
