import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import { CheckKeyTable, createCheckKeyClient } from '../../../functions/pre-traffic-hook/check-key-table';
import { CHECK_KEY_NAME } from '../../../functions/pre-traffic-hook/pre-traffic-run';
import type { ApiKeyRecord } from '../../../shared/domain/auth/api-key-store';
import { generateApiKey, generateKeyId, hashApiKey } from '../../../shared/domain/auth/api-keys';
import { createAuthenticator } from '../../../shared/domain/auth/authenticate';
import { DynamoApiKeyStore } from '../../../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';

/**
 * The hook writes the keys table with its own two calls, since the checks may not import shared/dynamodb:
 * here they meet the table as the stack defines it, read back by the store the authorizer uses.
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

const options = () => ({ abortSignal: AbortSignal.timeout(5_000) });

async function newTables() {
  const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
  await ensureTables(client, names);
  const hook = new CheckKeyTable(
    createCheckKeyClient({
      endpoint: dynamoDb.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
    names.apiKeys,
  );
  const store = new DynamoApiKeyStore(documentClientOver(client), names.apiKeys);
  return { hook, store };
}

function checkKey(): { apiKey: string; record: ApiKeyRecord } {
  const apiKey = generateApiKey();
  return {
    apiKey,
    record: { keyId: generateKeyId(), keyHash: hashApiKey(apiKey), name: CHECK_KEY_NAME, createdAt: new Date().toISOString() },
  };
}

describe("the hook's writes to the API keys table", () => {
  it('issue a key the authorizer accepts as that key, and revoke it so the authorizer refuses it', async () => {
    const { hook, store } = await newTables();
    const { apiKey, record } = checkKey();
    await hook.add(record, options());
    await expect(createAuthenticator(store)(`Bearer ${apiKey}`)).resolves.toEqual({ outcome: 'allowed', keyId: record.keyId });

    await hook.revoke(record.keyHash, new Date('2026-11-25T12:00:00Z'), options());
    await expect(createAuthenticator(store)(`Bearer ${apiKey}`)).resolves.toEqual({ outcome: 'invalid' });
    expect(await store.list()).toEqual([{ ...record, revokedAt: '2026-11-25T12:00:00.000Z' }]);
  });

  it('keep the first revocation date when revoking twice', async () => {
    const { hook, store } = await newTables();
    const { record } = checkKey();
    await hook.add(record, options());
    await hook.revoke(record.keyHash, new Date('2026-11-25T12:00:00Z'), options());
    await hook.revoke(record.keyHash, new Date('2026-11-26T12:00:00Z'), options());
    expect((await store.findByHash(record.keyHash))?.revokedAt).toBe('2026-11-25T12:00:00.000Z');
  });

  it('never overwrite a key already stored, nor create one by revoking', async () => {
    const { hook, store } = await newTables();
    const { record } = checkKey();
    await hook.add(record, options());
    await expect(hook.add({ ...record, name: 'someone else' }, options())).rejects.toThrow(
      expect.objectContaining({ name: 'ConditionalCheckFailedException' }),
    );
    await expect(hook.revoke(hashApiKey(generateApiKey()), new Date(), options())).rejects.toThrow(
      expect.objectContaining({ name: 'ConditionalCheckFailedException' }),
    );
    expect(await store.list()).toEqual([record]);
  });
});
