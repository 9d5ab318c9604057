import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { ApiKeyRecord } from '../../shared/domain/auth/api-key-store';
import { CHECK_KEY_ATTEMPT_TIMEOUT_MS, CHECK_KEY_MAX_ATTEMPTS } from './hook-time-budget';
import type { CallOptions, CheckKeyStore } from './pre-traffic-run';

/** The record's own field is the table's partition key, as the keys CLI's store writes it. */
const PARTITION_KEY: keyof ApiKeyRecord = 'keyHash';

/**
 * The hook's two writes to the API keys table. Not shared/dynamodb's store, which the checks may not import
 * (test/project/layers.test.ts): a key issued here is read back through that store by
 * test/functions/pre-traffic-hook/check-key-table.test.ts. Revoking by hash spares the hook the store's query by key id.
 */
export class CheckKeyTable implements CheckKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(record: ApiKeyRecord, options: CallOptions): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: record,
        ConditionExpression: 'attribute_not_exists(#hash)',
        ExpressionAttributeNames: { '#hash': PARTITION_KEY },
      }),
      options,
    );
  }

  async revoke(keyHash: string, at: Date, options: CallOptions): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [PARTITION_KEY]: keyHash },
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :at)',
        ConditionExpression: 'attribute_exists(#hash)',
        ExpressionAttributeNames: { '#hash': PARTITION_KEY },
        ExpressionAttributeValues: { ':at': at.toISOString() },
      }),
      options,
    );
  }
}

/** A document client whose every attempt is bounded (hook-time-budget.ts); where it points is Lambda's unless told. */
export function createCheckKeyClient(
  options: Pick<DynamoDBClientConfig, 'endpoint' | 'region' | 'credentials'> = {},
): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    ...options,
    maxAttempts: CHECK_KEY_MAX_ATTEMPTS,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: CHECK_KEY_ATTEMPT_TIMEOUT_MS,
      requestTimeout: CHECK_KEY_ATTEMPT_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    }),
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
