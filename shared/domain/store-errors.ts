/**
 * The store could not be reached or is throttling us; the request may be retried later. Kept apart
 * from shared/dynamodb/dynamodb-client.ts so code that only maps errors does not bundle the AWS SDK.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The data store is throttling or unavailable', { cause });
    this.name = 'StoreUnavailableError';
  }
}
