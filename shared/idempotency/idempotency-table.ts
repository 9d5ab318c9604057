/**
 * Key design of the idempotency table, shared by the persistence layer, the CDK construct and the
 * local tables so the three cannot disagree. The attribute names are Powertools' defaults, written
 * out because infra/ needs `expiration` for the table's TTL. See docs/idempotency.md.
 */
export const IDEMPOTENCY_TABLE = {
  /** `<operation>#<sha256 of the API key id and the Idempotency-Key>`. */
  partitionKey: 'id',
  /** Epoch seconds after which the record is void: DynamoDB's TTL deletes it, and the code ignores it before. */
  expiryAttribute: 'expiration',
} as const;

/**
 * How long a key is honoured: a replay within this time gets the original answer marked as a replay.
 * 24 hours, as Stripe and the IETF httpapi draft's examples do; afterwards the pet itself still
 * settles a retry (docs/idempotency.md).
 */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
