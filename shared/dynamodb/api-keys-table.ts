/** Key design of the API keys table, shared by the store, the CDK construct and the local tables. */
export const API_KEYS_TABLE = {
  partitionKey: 'keyHash',
  /** Looks a key up by its public id, for revocation. */
  byKeyIdIndex: { name: 'api-keys-by-id', partitionKey: 'keyId' },
} as const;
