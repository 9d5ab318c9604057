import { DeleteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putConditionally } from './conditional-put';
import { callStore } from './dynamodb-client';
import type {
  ClaimResult,
  CompletedRecord,
  IdempotencyRecord,
  IdempotencyStore,
  InProgressRecord,
} from '../domain/idempotency/idempotency-store';
import { IDEMPOTENCY_TABLE } from './idempotency-table';

const { partitionKey, expiryAttribute, statusAttribute, inProgressExpiryAttribute, validationAttribute, dataAttribute } = IDEMPOTENCY_TABLE;

export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(record: InProgressRecord, now: number): Promise<ClaimResult> {
    const put = await putConditionally(
      this.client,
      { [partitionKey]: record.id },
      {
        TableName: this.tableName,
        Item: toItem(record),
        // Free, expired, or held by a request whose Lambda deadline has passed (it died holding it).
        ConditionExpression: 'attribute_not_exists(#id) OR #expiry < :nowSeconds OR (#status = :inProgress AND #inProgressExpiry < :now)',
        ExpressionAttributeNames: {
          '#id': partitionKey,
          '#expiry': expiryAttribute,
          '#status': statusAttribute,
          '#inProgressExpiry': inProgressExpiryAttribute,
        },
        ExpressionAttributeValues: { ':nowSeconds': now / 1000, ':now': now, ':inProgress': 'INPROGRESS' },
      },
    );
    if (put.written) return { outcome: 'claimed' };
    if (put.current === undefined) return { outcome: 'vanished' };
    const existing = toRecord(put.current);
    // A record identical to ours, to the millisecond, is our own first attempt; were it another request's,
    // the pets table would still settle both to one pet.
    return isSameClaim(existing, record) ? { outcome: 'claimed' } : { outcome: 'held', record: existing };
  }

  async complete(record: CompletedRecord): Promise<void> {
    await callStore(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [partitionKey]: record.id },
          UpdateExpression: 'SET #expiry = :expiry, #status = :status, #data = :data, #validation = :validation',
          ExpressionAttributeNames: {
            '#expiry': expiryAttribute,
            '#status': statusAttribute,
            '#data': dataAttribute,
            '#validation': validationAttribute,
          },
          ExpressionAttributeValues: {
            ':expiry': record.expiration,
            ':status': record.status,
            ':data': record.data,
            ':validation': record.validation,
          },
        }),
      ),
    );
  }

  async release(id: string): Promise<void> {
    await callStore(() => this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { [partitionKey]: id } })));
  }
}

function toItem(record: InProgressRecord): Record<string, unknown> {
  return {
    [partitionKey]: record.id,
    [statusAttribute]: record.status,
    [expiryAttribute]: record.expiration,
    [inProgressExpiryAttribute]: record.inProgressExpiration,
    [validationAttribute]: record.validation,
  };
}

function toRecord(item: Record<string, unknown>): IdempotencyRecord {
  const common = {
    id: item[partitionKey] as string,
    expiration: item[expiryAttribute] as number,
    validation: item[validationAttribute] as string,
  };
  return item[statusAttribute] === 'COMPLETED'
    ? { ...common, status: 'COMPLETED', data: item[dataAttribute] as Record<string, unknown> }
    : { ...common, status: 'INPROGRESS', inProgressExpiration: item[inProgressExpiryAttribute] as number };
}

function isSameClaim(stored: IdempotencyRecord, ours: InProgressRecord): boolean {
  return (
    stored.status === 'INPROGRESS' &&
    stored.validation === ours.validation &&
    stored.expiration === ours.expiration &&
    stored.inProgressExpiration === ours.inProgressExpiration
  );
}
