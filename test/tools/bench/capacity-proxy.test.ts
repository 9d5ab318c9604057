import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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

  it('charges a delete for its item and the entry it removes from each index the item was in', async () => {
    await direct.send(new PutCommand({ TableName: tables.pets, Item: { ...item, id: 10, status: 'sold', statusShard: 'sold' } }));
    proxy.take();
    await metered.send(new DeleteCommand({ TableName: tables.pets, Key: { id: 10 } }));
    expect(proxy.take()).toEqual([{ operation: 'DeleteItem', table: tables.pets, capacityUnits: 3, kind: 'write' }]);
    expect((await direct.send(new GetCommand({ TableName: tables.pets, Key: { id: 10 } }))).Item).toBeUndefined();
  });

  it('charges an update one write per entry that stays under its key or enters an index, two per entry that moves', async () => {
    await direct.send(new PutCommand({ TableName: tables.pets, Item: { ...item, id: 11 } }));
    proxy.take();
    // Its pets-by-creation entry changes in place and it enters pets-by-status-shard: 1 for the item, 1 for each.
    await metered.send(
      new UpdateCommand({
        TableName: tables.pets,
        Key: { id: 11 },
        UpdateExpression: 'SET #status = :status, statusShard = :status',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': 'sold' },
      }),
    );
    // A new createdKey moves it in both indexes: each removes the old entry and puts the new.
    await metered.send(
      new UpdateCommand({
        TableName: tables.pets,
        Key: { id: 11 },
        UpdateExpression: 'SET createdKey = :key',
        ExpressionAttributeValues: { ':key': 'l' },
      }),
    );
    expect(proxy.take()).toEqual([
      { operation: 'UpdateItem', table: tables.pets, capacityUnits: 1 + 2, kind: 'write' },
      { operation: 'UpdateItem', table: tables.pets, capacityUnits: 1 + 2 * 2, kind: 'write' },
    ]);
  });

  it('charges a write that leaves an item as it was for its item alone', async () => {
    await direct.send(new PutCommand({ TableName: tables.pets, Item: { ...item, id: 12 } }));
    proxy.take();
    await metered.send(new PutCommand({ TableName: tables.pets, Item: { ...item, id: 12 } }));
    expect(proxy.take()).toEqual([{ operation: 'PutItem', table: tables.pets, capacityUnits: 1, kind: 'write' }]);
  });

  it('charges a put to a table without indexes for its item alone', async () => {
    proxy.take();
    await metered.send(new PutCommand({ TableName: tables.idempotency, Item: { id: 'record', status: 'COMPLETED' } }));
    expect(proxy.take()).toEqual([{ operation: 'PutItem', table: tables.idempotency, capacityUnits: 1, kind: 'write' }]);
  });
});
