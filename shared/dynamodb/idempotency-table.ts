/**
 * Key design and attributes of the idempotency table, shared by the store, the CDK construct and the
 * local tables. Stored records use these names, so they never change (docs/idempotency.md).
 */
export const IDEMPOTENCY_TABLE = {
  /** `<operation>#<sha256 of the API key id and the Idempotency-Key>`. */
  partitionKey: 'id',
  /** Epoch seconds after which the record is void: DynamoDB's TTL deletes it, and the code ignores it before. */
  expiryAttribute: 'expiration',
  /** `INPROGRESS` or `COMPLETED`. */
  statusAttribute: 'status',
  /** Epoch milliseconds: the Lambda deadline of the request that holds the key (in progress only). */
  inProgressExpiryAttribute: 'in_progress_expiration',
  /** Hash of the request's validated input: the same key with another input is refused. */
  validationAttribute: 'validation',
  /** The operation's result (completed only). */
  dataAttribute: 'data',
} as const;
