import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  IdempotencyInconsistentStateError,
  IdempotencyItemAlreadyExistsError,
  IdempotencyItemNotFoundError,
  IdempotencyRecordStatus,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { IDEMPOTENCY_TABLE } from './idempotency-table';

/**
 * Powertools' DynamoDB persistence layer on our client (its per-attempt timeouts and the request
 * deadline apply), with one fix: it recognises its own in-progress record.
 *
 * The SDK retries a PutItem whose answer was lost; the retry then fails Powertools' condition on the
 * record the first attempt wrote, and Powertools reports "already in progress" for a request that is
 * not running anywhere else, a 409 until the record's in-progress expiry. A record identical to the
 * one this call wrote (status, payload hash, both expiry timestamps) is this call's own: another
 * request would have to start in the same millisecond with the same deadline and body. Even then the
 * pets table settles it: both requests derive the same pet id and return the same pet.
 */
export class DynamoIdempotencyStore extends DynamoDBPersistenceLayer {
  constructor(client: DynamoDBClient, tableName: string) {
    super({
      tableName,
      awsSdkV3Client: client,
      keyAttr: IDEMPOTENCY_TABLE.partitionKey,
      expiryAttr: IDEMPOTENCY_TABLE.expiryAttribute,
    });
  }

  protected override async _putRecord(record: IdempotencyRecord): Promise<void> {
    try {
      await super._putRecord(record);
    } catch (error) {
      if (!(error instanceof IdempotencyItemAlreadyExistsError)) throw error;
      // DynamoDB returns the existing record with the failed condition; dynalite does not, so read it.
      const existing = error.existingRecord ?? (await this.readExisting(record.idempotencyKey));
      if (isSameRecord(existing, record)) return;
      throw new IdempotencyItemAlreadyExistsError(error.message, existing);
    }
  }

  private async readExisting(idempotencyKey: string): Promise<IdempotencyRecord> {
    try {
      return await this._getRecord(idempotencyKey);
    } catch (error) {
      // Deleted since the condition failed (its request ended in an error): Powertools starts over.
      if (error instanceof IdempotencyItemNotFoundError) throw new IdempotencyInconsistentStateError(error.message);
      throw error;
    }
  }
}

function isSameRecord(stored: IdempotencyRecord, written: IdempotencyRecord): boolean {
  return (
    stored.getStatus() === IdempotencyRecordStatus.INPROGRESS &&
    written.getStatus() === IdempotencyRecordStatus.INPROGRESS &&
    stored.payloadHash === written.payloadHash &&
    stored.expiryTimestamp === written.expiryTimestamp &&
    stored.inProgressExpiryTimestamp !== undefined &&
    stored.inProgressExpiryTimestamp === written.inProgressExpiryTimestamp
  );
}
