import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { callStore } from './dynamodb-client';
import type { ApiKeyRecord, ApiKeyStore } from '../domain/auth/api-key-store';
import { API_KEYS_TABLE } from './api-keys-table';

export class DynamoApiKeyStore implements ApiKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await callStore(() =>
      this.client.send(
        // Strongly consistent, so a revocation is seen by the next uncached check.
        new GetCommand({ TableName: this.tableName, Key: { [API_KEYS_TABLE.partitionKey]: keyHash }, ConsistentRead: true }),
      ),
    );
    return Item as ApiKeyRecord | undefined;
  }

  async add(record: ApiKeyRecord): Promise<void> {
    await callStore(() =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: record,
          ConditionExpression: 'attribute_not_exists(#hash)',
          ExpressionAttributeNames: { '#hash': API_KEYS_TABLE.partitionKey },
        }),
      ),
    );
  }

  /** An operator's listing of a small table; never on a request path. */
  async list(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    for await (const page of paginateScan({ client: this.client }, { TableName: this.tableName })) {
      records.push(...((page.Items ?? []) as ApiKeyRecord[]));
    }
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async revoke(keyId: string, at: Date): Promise<boolean> {
    const { Items = [] } = await callStore(() =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: API_KEYS_TABLE.byKeyIdIndex.name,
          KeyConditionExpression: '#keyId = :keyId',
          ExpressionAttributeNames: { '#keyId': API_KEYS_TABLE.byKeyIdIndex.partitionKey },
          ExpressionAttributeValues: { ':keyId': keyId },
        }),
      ),
    );
    const [item] = Items;
    if (item === undefined) return false;
    return this.revokeByHash(item[API_KEYS_TABLE.partitionKey] as string, at);
  }

  async revokeByHash(keyHash: string, at: Date): Promise<boolean> {
    try {
      await callStore(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { [API_KEYS_TABLE.partitionKey]: keyHash },
            UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :at)',
            // Never creates a record: revoking a hash no key has changes nothing.
            ConditionExpression: 'attribute_exists(#hash)',
            ExpressionAttributeNames: { '#hash': API_KEYS_TABLE.partitionKey },
            ExpressionAttributeValues: { ':at': at.toISOString() },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
