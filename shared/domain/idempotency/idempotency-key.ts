import * as v from 'valibot';

/** The request header, lower-cased as API Gateway delivers headers. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** The response header that marks an answer as the replay of an earlier one. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

const keyMessage = `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`;

/**
 * A client-chosen key that makes a POST safe to retry: printable ASCII, as Stripe accepts, so any UUID,
 * ULID or random token fits; compared byte for byte, never parsed.
 */
export const IdempotencyKeySchema = v.pipe(
  v.string(keyMessage),
  v.regex(new RegExp(`^[\\x20-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`), keyMessage),
  v.description(
    'Makes the request safe to retry: a unique value per pet to create (a UUID, say). The same key with the same body within 24 hours returns the original answer with `Idempotent-Replayed: true` and creates nothing; with a different body it is 422; while the first request is still running it is 409. Scoped to the API key.',
  ),
  v.metadata({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, examples: ['5f3c2f63-1d7e-4a0b-9a51-6c1b2f9e7d10'] }),
);

/** Who asked, and under which key: keys of different API keys never meet. */
export interface IdempotencyScope {
  /** The public id of the API key that sent the request. */
  readonly keyId: string;
  readonly idempotencyKey: string;
}
