import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import type { ApiKeyRecord } from '../../../shared/domain/auth/api-key-store';
import { generateApiKey, generateKeyId, hashApiKey } from '../../../shared/domain/auth/api-keys';
import { createAuthenticator } from '../../../shared/domain/auth/authenticate';
import { DynamoApiKeyStore } from '../../../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';

/**
 * The keys table's one store, against the table as the stack defines it: what the keys CLI and the
 * pre-traffic hook write, the authorizer reads.
 */

let dynamoDb: LocalDynamoDb;
let client: DynamoDBClient;
let tableCount = 0;

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  client = createLocalClient(dynamoDb.endpoint);
});
afterAll(async () => {
  client?.destroy();
  await dynamoDb?.close();
});

async function newStore(): Promise<DynamoApiKeyStore> {
  const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
  await ensureTables(client, names);
  return new DynamoApiKeyStore(documentClientOver(client), names.apiKeys);
}

function newKey(): { apiKey: string; record: ApiKeyRecord } {
  const apiKey = generateApiKey();
  return { apiKey, record: { keyId: generateKeyId(), keyHash: hashApiKey(apiKey), name: 'a client', createdAt: new Date().toISOString() } };
}

describe('the API keys store', () => {
  it('issues a key the authorizer accepts as that key, and revokes it by its hash so the authorizer refuses it', async () => {
    const store = await newStore();
    const { apiKey, record } = newKey();
    await store.add(record);
    await expect(createAuthenticator(store)(`Bearer ${apiKey}`)).resolves.toEqual({ outcome: 'allowed', keyId: record.keyId });

    await expect(store.revokeByHash(record.keyHash, new Date('2026-11-25T12:00:00Z'))).resolves.toBe(true);
    await expect(createAuthenticator(store)(`Bearer ${apiKey}`)).resolves.toEqual({ outcome: 'invalid' });
    expect(await store.list()).toEqual([{ ...record, revokedAt: '2026-11-25T12:00:00.000Z' }]);
  });

  it('keeps the first revocation date when a key is revoked twice, by its id or its hash', async () => {
    const store = await newStore();
    const { record } = newKey();
    await store.add(record);
    await store.revokeByHash(record.keyHash, new Date('2026-11-25T12:00:00Z'));
    await expect(store.revoke(record.keyId, new Date('2026-11-26T12:00:00Z'))).resolves.toBe(true);
    expect((await store.findByHash(record.keyHash))?.revokedAt).toBe('2026-11-25T12:00:00.000Z');
  });

  it('never overwrites a key already stored, nor creates one by revoking a hash or an id no key has', async () => {
    const store = await newStore();
    const { record } = newKey();
    await store.add(record);
    await expect(store.add({ ...record, name: 'someone else' })).rejects.toThrow(
      expect.objectContaining({ name: 'ConditionalCheckFailedException' }),
    );
    await expect(store.revokeByHash(hashApiKey(generateApiKey()), new Date())).resolves.toBe(false);
    await expect(store.revoke(generateKeyId(), new Date())).resolves.toBe(false);
    expect(await store.list()).toEqual([record]);
  });
});
