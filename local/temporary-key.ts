import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { issueApiKey } from '../shared/domain/auth/manage-api-keys';
import { DynamoApiKeyStore } from '../shared/dynamodb/dynamo-api-key-store';
import { LOCAL_TABLES } from './dynamodb-local';

/** A key issued in the local keys table for one run of a tool, and how to end it. */
export interface TemporaryKey {
  readonly apiKey: string;
  readonly keyId: string;
  /** Revokes the key, as `npm run keys -- revoke` would: it stays on record, refused from then on. */
  revoke(): Promise<unknown>;
}

/** Issues a key named `name` in the local API's keys table, for a tool that needs one only while it runs. */
export async function issueTemporaryLocalKey(documents: DynamoDBDocumentClient, name: string): Promise<TemporaryKey> {
  const store = new DynamoApiKeyStore(documents, LOCAL_TABLES.apiKeys);
  const { apiKey, record } = await issueApiKey(store, name);
  return { apiKey, keyId: record.keyId, revoke: () => store.revoke(record.keyId, new Date()) };
}
