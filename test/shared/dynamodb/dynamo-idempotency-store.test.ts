import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';
import { DynamoIdempotencyStore } from '../../../shared/dynamodb/dynamo-idempotency-store';
import type { CompletedRecord, IdempotencyStore, InProgressRecord } from '../../../shared/domain/idempotency/idempotency-store';
import { IDEMPOTENCY_TABLE } from '../../../shared/dynamodb/idempotency-table';
import { InMemoryIdempotencyStore } from '../../helpers/in-memory-stores';

let dynamoDb: LocalDynamoDb;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let tableCount = 0;

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  client = createLocalClient(dynamoDb.endpoint);
  documents = documentClientOver(client);
});
afterAll(async () => {
  client?.destroy();
  await dynamoDb?.close();
});

const NOW = Date.UTC(2026, 10, 23, 12);

function claimAt(now: number, overrides: Partial<InProgressRecord> = {}): InProgressRecord {
  return {
    id: 'createPet#key',
    status: 'INPROGRESS',
    expiration: now / 1000 + 86_400,
    inProgressExpiration: now + 10_000,
    validation: 'body-1',
    ...overrides,
  };
}

function completed(overrides: Partial<CompletedRecord> = {}): CompletedRecord {
  return {
    id: 'createPet#key',
    status: 'COMPLETED',
    expiration: NOW / 1000 + 86_400,
    validation: 'body-1',
    data: { pet: { id: 7, name: 'Rex' } },
    ...overrides,
  };
}

/** Each store under test, with a way to read a record as it is stored. */
const stores: Array<[string, () => Promise<{ store: IdempotencyStore; stored: (id: string) => Promise<unknown> }>]> = [
  [
    'the DynamoDB idempotency store (on dynalite)',
    async () => {
      const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
      await ensureTables(client, names);
      const store = new DynamoIdempotencyStore(documents, names.idempotency);
      const stored = async (id: string) =>
        (
          await documents.send(
            new GetCommand({ TableName: names.idempotency, Key: { [IDEMPOTENCY_TABLE.partitionKey]: id }, ConsistentRead: true }),
          )
        ).Item;
      return { store, stored };
    },
  ],
  [
    'the in-memory idempotency store (its fake)',
    async () => {
      const store = new InMemoryIdempotencyStore();
      return { store, stored: async (id: string) => store.records.get(id) };
    },
  ],
];

describe.each(stores)('%s', (_, open) => {
  it('claims a free key and keeps the claim', async () => {
    const { store, stored } = await open();
    expect(await store.claim(claimAt(NOW), NOW)).toEqual({ outcome: 'claimed' });
    expect(await stored('createPet#key')).toBeDefined();
  });

  it('refuses a second claim while the first is in progress, returning the record that holds the key', async () => {
    const { store } = await open();
    await store.claim(claimAt(NOW), NOW);
    expect(await store.claim(claimAt(NOW + 5, { validation: 'body-2' }), NOW + 5)).toEqual({ outcome: 'held', record: claimAt(NOW) });
  });

  it('takes over a claim whose request outlived its Lambda deadline', async () => {
    const { store } = await open();
    await store.claim(claimAt(NOW), NOW);
    const later = NOW + 10_001;
    expect(await store.claim(claimAt(later), later)).toEqual({ outcome: 'claimed' });
    expect(await store.claim(claimAt(later + 1), later + 1)).toMatchObject({ outcome: 'held', record: claimAt(later) });
  });

  it('returns a completed record, with its data, to a claim of its key', async () => {
    const { store } = await open();
    await store.claim(claimAt(NOW), NOW);
    await store.complete(completed());
    expect(await store.claim(claimAt(NOW + 20_000), NOW + 20_000)).toEqual({ outcome: 'held', record: completed() });
  });

  it('lets an expired record go, whether or not anything deleted it', async () => {
    const { store } = await open();
    await store.claim(claimAt(NOW), NOW);
    await store.complete(completed());
    const dayLater = NOW + 86_401_000;
    expect(await store.claim(claimAt(dayLater), dayLater)).toEqual({ outcome: 'claimed' });
  });

  it('frees a released key for the next claim', async () => {
    const { store, stored } = await open();
    await store.claim(claimAt(NOW), NOW);
    await store.release('createPet#key');
    expect(await stored('createPet#key')).toBeUndefined();
    expect(await store.claim(claimAt(NOW + 1, { validation: 'body-2' }), NOW + 1)).toEqual({ outcome: 'claimed' });
  });
});

describe('the DynamoDB idempotency store', () => {
  it("counts a claim that finds its own identical record as claimed: the SDK's retry of a write whose answer was lost", async () => {
    const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
    await ensureTables(client, names);
    const store = new DynamoIdempotencyStore(documents, names.idempotency);
    expect(await store.claim(claimAt(NOW), NOW)).toEqual({ outcome: 'claimed' });
    // The same record again, as the SDK sends it again: same deadline, same body, same expiry.
    expect(await store.claim(claimAt(NOW), NOW + 3)).toEqual({ outcome: 'claimed' });
    // Another request's claim, a millisecond apart, is not ours.
    expect(await store.claim(claimAt(NOW + 1), NOW + 4)).toMatchObject({ outcome: 'held' });
  });

  it('writes the record attributes under their established names and values, so records written before read the same', async () => {
    const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
    await ensureTables(client, names);
    const store = new DynamoIdempotencyStore(documents, names.idempotency);
    await store.claim(claimAt(NOW), NOW);
    const read = async () =>
      (await documents.send(new GetCommand({ TableName: names.idempotency, Key: { id: 'createPet#key' }, ConsistentRead: true }))).Item;
    expect(await read()).toEqual({
      id: 'createPet#key',
      status: 'INPROGRESS',
      expiration: NOW / 1000 + 86_400,
      in_progress_expiration: NOW + 10_000,
      validation: 'body-1',
    });
    await store.complete(completed());
    expect(await read()).toEqual({
      id: 'createPet#key',
      status: 'COMPLETED',
      expiration: NOW / 1000 + 86_400,
      in_progress_expiration: NOW + 10_000,
      validation: 'body-1',
      data: { pet: { id: 7, name: 'Rex' } },
    });
  });
});
