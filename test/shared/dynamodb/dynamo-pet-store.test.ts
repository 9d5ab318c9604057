import type { ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import { LISTING } from '../../../shared/facts/listing';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';
import { DynamoPetStore } from '../../../shared/dynamodb/dynamo-pet-store';
import { firstQueryLimit } from '../../../shared/dynamodb/newest-first';
import type { PetRecord } from '../../../shared/domain/pets/pet-schemas';
import type { ListPosition } from '../../../shared/domain/pets/pet-store';
import { IdempotencyKeyReusedError } from '../../../shared/domain/idempotency/idempotency-errors';
import { createPet, listPets, petIdFor } from '../../../shared/domain/pets/pet-operations';

let dynamoDb: LocalDynamoDb;
let client: DynamoDBClient;
/** What DynamoDB reported for each request: the cost the service pays. */
const reads: Array<{ capacity: ConsumedCapacity | undefined; scanned: number | undefined }> = [];
let tableCount = 0;

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  client = createLocalClient(dynamoDb.endpoint);
  // Ask DynamoDB for the cost of every query the store makes, without changing the store.
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const output = result.output as { ConsumedCapacity?: ConsumedCapacity; ScannedCount?: number };
      reads.push({ capacity: output.ConsumedCapacity, scanned: output.ScannedCount });
      return result;
    },
    { step: 'initialize' },
  );
});
afterAll(async () => {
  client?.destroy();
  await dynamoDb?.close();
});

async function newStore() {
  const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
  await ensureTables(client, names);
  return new DynamoPetStore(documentClientOver(client), names.pets, LISTING.shards);
}

function pet(id: number, overrides: Partial<PetRecord> = {}): PetRecord {
  const createdAt = overrides.createdAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, id)).toISOString();
  return { id, name: `pet ${id}`, categoryId: 1, createdAt, ...overrides };
}

async function seed(store: DynamoPetStore, count: number) {
  for (let id = 1; id <= count; id += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, count - id + 1) }, (_, offset) => store.insert(pet(id + offset), `seed ${id + offset}`)),
    );
  }
}

describe('the DynamoDB pet store', () => {
  it('refuses a second pet with the same id from another request, keeping the first', async () => {
    const store = await newStore();
    expect(await store.insert(pet(7, { name: 'first' }), 'request A')).toEqual({ outcome: 'inserted' });
    expect(await store.insert(pet(7, { name: 'second' }), 'request B')).toEqual({ outcome: 'taken' });
    expect((await store.get(7))?.name).toBe('first');
  });

  it("recognises the same request's earlier write of an id as its own, storing nothing new", async () => {
    const store = await newStore();
    const first = pet(7, { name: 'first' });
    await store.insert(first, 'request A');
    expect(await store.insert(pet(7, { name: 'again' }), 'request A')).toEqual({ outcome: 'exists', existing: first });
    expect(await store.get(7)).toEqual(first);
  });

  it('moves on to the next candidate id when another request holds the first', async () => {
    const store = await newStore();
    await store.insert(pet(petIdFor('request A', 0), { createdAt: '2026-01-01T00:00:00.000Z' }), 'someone else');
    const { pet: created, replayed } = await createPet(store, { name: 'Rex', categoryId: 1 }, { creationToken: 'request A' });
    expect(created.id).toBe(petIdFor('request A', 1));
    expect(replayed).toBe(false);
    expect((await store.get(created.id))?.name).toBe('Rex');
  });

  it('answers a repeated request with the pet it created first, marked as replayed', async () => {
    const store = await newStore();
    const first = await createPet(store, { name: 'Rex', categoryId: 1 }, { creationToken: 'request A', now: () => new Date(1) });
    const again = await createPet(store, { name: 'Rex', categoryId: 1 }, { creationToken: 'request A', now: () => new Date(2) });
    expect(again).toEqual({ pet: first.pet, replayed: true });
  });

  it('refuses the same request token with a different pet', async () => {
    const store = await newStore();
    await createPet(store, { name: 'Rex', categoryId: 1 }, { creationToken: 'request A' });
    await expect(createPet(store, { name: 'Tom', categoryId: 1 }, { creationToken: 'request A' })).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
  });

  it('orders pets created in the same millisecond by id, newest first', async () => {
    const store = await newStore();
    const createdAt = '2026-01-01T00:00:00.000Z';
    for (const id of [5, 500, 50]) await store.insert(pet(id, { createdAt }), `request ${id}`);
    const page = await store.list({ limit: 10 });
    expect(page.pets.map((item) => item.id)).toEqual([500, 50, 5]);
  });

  it('keeps pets without a status out of status listings', async () => {
    const store = await newStore();
    await store.insert(pet(1), 'request 1');
    await store.insert(pet(2, { status: 'sold' }), 'request 2');
    expect((await store.list({ status: 'sold', limit: 10 })).pets.map((item) => item.id)).toEqual([2]);
    expect((await store.list({ limit: 10 })).pets.map((item) => item.id)).toEqual([2, 1]);
  });

  it('pages through every pet exactly once', async () => {
    const store = await newStore();
    await seed(store, 23);
    const seen: number[] = [];
    let after: ListPosition | undefined;
    do {
      const page = await listPets(store, { limit: 5, after });
      seen.push(...page.pets.map((item) => item.id));
      after = page.next;
    } while (after);
    expect(seen).toEqual(Array.from({ length: 23 }, (_, index) => 23 - index));
  });

  it('reads the same items and capacity for a page whatever the table size: one query per listing shard', async () => {
    const costOfAPage = async (tableSize: number) => {
      const store = await newStore();
      await seed(store, tableSize);
      reads.length = 0;
      const page = await store.list({ limit: 20 });
      expect(page.pets).toHaveLength(20);
      return {
        queries: reads.length,
        capacityUnits: reads.reduce((sum, read) => sum + (read.capacity?.CapacityUnits ?? 0), 0),
        itemsRead: reads.reduce((sum, read) => sum + (read.scanned ?? 0), 0),
      };
    };
    const small = await costOfAPage(120);
    const large = await costOfAPage(600);
    expect(large.queries).toBe(LISTING.shards);
    expect(large.itemsRead).toBe(LISTING.shards * firstQueryLimit(21, LISTING.shards));
    expect(large.capacityUnits).toBeGreaterThan(0);
    expect(large).toEqual(small);
  });
});
