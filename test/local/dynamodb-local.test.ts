import { createRequire } from 'node:module';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { queryObjects } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, LOCAL_TABLES, startDynalite, type LocalDynamoDb } from '../../local/dynamodb-local';
import { createPet, listPets } from '../../shared/domain/pets/pet-operations';
import { DynamoPetStore } from '../../shared/dynamodb/dynamo-pet-store';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { LISTING } from '../../shared/facts/listing';

let dynamoDb: LocalDynamoDb;
let client: DynamoDBClient;
let store: DynamoPetStore;
beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  client = createLocalClient(dynamoDb.endpoint);
  await ensureTables(client);
  store = new DynamoPetStore(documentClientOver(client), LOCAL_TABLES.pets, LISTING.shards);
  for (let index = 0; index < 20; index++)
    await createPet(store, { name: `pet ${index}`, categoryId: 1 }, { creationToken: `pet ${index}` });
});
afterAll(async () => {
  client?.destroy();
  await dynamoDb?.close();
});

// The iterator class of dynalite's own store (memory-level's abstract-level), wherever npm placed it.
const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
const { AbstractValueIterator } = createRequire(fromDynalite.resolve('memory-level'))('abstract-level') as typeof import('abstract-level');

/** dynalite's store iterators still on the heap: queryObjects collects the garbage first. */
const liveIterators = () => queryObjects(AbstractValueIterator, { format: 'count' });

describe('the local DynamoDB (dynalite, with local/patches/dynalite+4.0.0.patch)', () => {
  it("keeps no query's iterator once it has answered: 100 listings, 400 queries, leave none behind", async () => {
    // Unpatched, dynalite 4.0.0 never closes them, and npm start's memory grows with every listing.
    const before = liveIterators();
    for (let page = 0; page < 100; page++) await listPets(store, { limit: 1 + (page % 20) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(liveIterators() - before).toBeLessThan(10);
  });
});
