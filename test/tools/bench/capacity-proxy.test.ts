import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCapacityProxy, type CapacityProxy } from '../../../tools/bench/capacity-proxy';
import { createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';
import { PETS_TABLE } from '../../../shared/dynamodb/pets-table';

const tables = { pets: 'metered-pets', apiKeys: 'metered-keys', idempotency: 'metered-idempotency' };
const item = {
  id: 7,
  name: 'Rex',
  categoryId: 1,
  createdAt: '2026-11-23T00:00:00.000Z',
  collection: PETS_TABLE.collection,
  createdKey: 'k',
};

let dynamo: LocalDynamoDb;
let proxy: CapacityProxy;
let direct: DynamoDBDocumentClient;
let metered: DynamoDBDocumentClient;

beforeAll(async () => {
  dynamo = await startDynalite({ port: 0 });
  const client = createLocalClient(dynamo.endpoint);
  await ensureTables(client, tables);
  direct = documentClientOver(client);
  proxy = await startCapacityProxy(dynamo.endpoint);
  metered = documentClientOver(createLocalClient(proxy.endpoint));
});

afterAll(async () => {
  direct?.destroy();
  metered?.destroy();
  await proxy?.close();
  await dynamo?.close();
});

describe("the benchmark's capacity proxy", () => {
  it('records what DynamoDB says each request consumed, as read or write units of its table, a put once more per index entry it writes', async () => {
    proxy.take();
    // The item has `collection` and `createdKey`, so it is in pets-by-creation alone: 1 unit for the item, 1 for its entry.
    await metered.send(new PutCommand({ TableName: tables.pets, Item: item }));
    await metered.send(new GetCommand({ TableName: tables.pets, Key: { id: 7 } }));
    await metered.send(new GetCommand({ TableName: tables.pets, Key: { id: 7 }, ConsistentRead: true }));
    expect(proxy.take()).toEqual([
      { operation: 'PutItem', table: tables.pets, capacityUnits: 2, kind: 'write' },
      { operation: 'GetItem', table: tables.pets, capacityUnits: 0.5, kind: 'read' },
      { operation: 'GetItem', table: tables.pets, capacityUnits: 1, kind: 'read' },
    ]);
    expect(proxy.take()).toEqual([]);
  });

  it('passes requests and answers through: the write is stored, the reads see it', async () => {
    await metered.send(new PutCommand({ TableName: tables.pets, Item: { ...item, id: 8 } }));
    expect((await direct.send(new GetCommand({ TableName: tables.pets, Key: { id: 8 } }))).Item).toEqual({ ...item, id: 8 });
    const { Items } = await metered.send(
      new QueryCommand({
        TableName: tables.pets,
        IndexName: PETS_TABLE.allPetsIndex.name,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': PETS_TABLE.allPetsIndex.partitionKey },
        ExpressionAttributeValues: { ':c': PETS_TABLE.collection },
      }),
    );
    expect(Items?.map((pet) => pet.id).sort()).toEqual([7, 8]);
  });
});

describe("the benchmark's capacity proxy, charging index entries", () => {
  it('charges a put with a status for its item and its entry in each of the two listing indexes, each rounded up to 1 KB', async () => {
    proxy.take();
    const large = { ...item, id: 9, status: 'sold', statusShard: 'sold', name: 'x'.repeat(1_500) };
    await metered.send(new PutCommand({ TableName: tables.pets, Item: large }));
    expect(proxy.take()).toEqual([{ operation: 'PutItem', table: tables.pets, capacityUnits: 3 * 2, kind: 'write' }]);
  });

  it('charges a put to a table without indexes for its item alone', async () => {
    proxy.take();
    await metered.send(new PutCommand({ TableName: tables.idempotency, Item: { id: 'record', status: 'COMPLETED' } }));
    expect(proxy.take()).toEqual([{ operation: 'PutItem', table: tables.idempotency, capacityUnits: 1, kind: 'write' }]);
  });
});
