import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, LOCAL_TABLES, startDynalite } from '../../local/dynamodb-local';
import { API_KEYS_TABLE } from '../../shared/dynamodb/api-keys-table';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { toItem } from '../../shared/dynamodb/dynamo-pet-store';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import type { PetRecord } from '../../shared/domain/pets/pet-schemas';
import { interruptWrite } from '../helpers/interrupted-writes';
import { scanTable } from '../helpers/pets';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'animal-store-repair-'));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts dynalite on the data directory, as `npm start` does, and hands `use` a client and what the repair said. */
async function withDynalite(use: (tables: DynamoDBDocumentClient, repairs: string[]) => Promise<void>): Promise<string[]> {
  const repairs: string[] = [];
  const dynamoDb = await startDynalite({ port: 0, dataDir, onIndexRepair: (message) => repairs.push(message) });
  const client = createLocalClient(dynamoDb.endpoint);
  try {
    await ensureTables(client);
    await use(documentClientOver(client), repairs);
  } finally {
    client.destroy();
    await dynamoDb.close();
  }
  return repairs;
}

function petItem(id: number, fields: Partial<PetRecord> = {}): Record<string, unknown> {
  return toItem(
    { id, name: `Pet ${id}`, categoryId: 1, status: 'available', createdAt: '2026-01-02T03:04:05.000Z', ...fields },
    `token-${id}`,
    1,
  );
}

/** The items in one partition of a table's index, as a listing or a key lookup reads them. */
async function itemsIn(
  tables: DynamoDBDocumentClient,
  index: { name: string; partitionKey: string },
  partition: string,
  table: string = LOCAL_TABLES.pets,
): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await tables.send(
    new QueryCommand({
      TableName: table,
      IndexName: index.name,
      KeyConditionExpression: '#partition = :partition',
      ExpressionAttributeNames: { '#partition': index.partitionKey },
      ExpressionAttributeValues: { ':partition': partition },
    }),
  );
  return Items;
}

/** Ids in a pets index's partition, as a listing reads them. */
async function idsIn(tables: DynamoDBDocumentClient, index: { name: string; partitionKey: string }, partition: string): Promise<unknown[]> {
  return (await itemsIn(tables, index, partition)).map((item) => item.id);
}

const { allPetsIndex, byStatusIndex, collection } = PETS_TABLE;

describe('starting dynalite on a data directory a crash left inconsistent', () => {
  it('removes the index entries of a create killed before its item was written, saying which', async () => {
    await withDynalite(async (tables) => {
      await tables.send(new PutCommand({ TableName: LOCAL_TABLES.pets, Item: petItem(1) }));
    });
    await interruptWrite(dataDir, LOCAL_TABLES.pets, null, petItem(2, { status: 'sold' }));

    const repairs = await withDynalite(async (tables) => {
      expect(await idsIn(tables, allPetsIndex, collection)).toEqual([1]);
      expect(await idsIn(tables, byStatusIndex, 'sold')).toEqual([]);
      expect(await idsIn(tables, byStatusIndex, 'available')).toEqual([1]);
      expect((await scanTable(tables, LOCAL_TABLES.pets)).map((item) => item.id)).toEqual([1]);
    });
    expect(repairs).toEqual([
      `DATA_DIR: repaired index entries a crash left out of step with their items: ${LOCAL_TABLES.pets} ${allPetsIndex.name} 1 removed, 0 restored; ${LOCAL_TABLES.pets} ${byStatusIndex.name} 1 removed, 0 restored`,
    ]);
  });

  it('lists the item again when a delete was killed after removing its index entries, since the item is still there', async () => {
    await withDynalite(async (tables) => {
      await tables.send(new PutCommand({ TableName: LOCAL_TABLES.pets, Item: petItem(3) }));
    });
    await interruptWrite(dataDir, LOCAL_TABLES.pets, petItem(3), null);

    const repairs = await withDynalite(async (tables) => {
      expect(await idsIn(tables, allPetsIndex, collection)).toEqual([3]);
      expect(await idsIn(tables, byStatusIndex, 'available')).toEqual([3]);
    });
    expect(repairs).toHaveLength(1);
    expect(repairs[0]).toContain(`${byStatusIndex.name} 0 removed, 1 restored`);
  });

  it('puts the item back in its own place when an update was killed after moving its index entries', async () => {
    await withDynalite(async (tables) => {
      await tables.send(new PutCommand({ TableName: LOCAL_TABLES.pets, Item: petItem(4) }));
    });
    await interruptWrite(dataDir, LOCAL_TABLES.pets, petItem(4), petItem(4, { status: 'sold', name: 'Renamed' }));

    await withDynalite(async (tables) => {
      expect(await idsIn(tables, byStatusIndex, 'sold')).toEqual([]);
      expect(await idsIn(tables, byStatusIndex, 'available')).toEqual([4]);
      expect(await itemsIn(tables, allPetsIndex, collection)).toEqual([petItem(4)]);
    });
  });

  it('repairs the API keys table, whose index keeps the keys only, as well', async () => {
    const key = {
      keyHash: 'hash-of-a-key-never-written',
      keyId: 'key_0123456789abcdef',
      name: 'lost',
      createdAt: '2026-01-02T03:04:05.000Z',
    };
    await withDynalite(async () => undefined);
    await interruptWrite(dataDir, LOCAL_TABLES.apiKeys, null, key);

    const repairs = await withDynalite(async (tables) => {
      expect(await itemsIn(tables, API_KEYS_TABLE.byKeyIdIndex, key.keyId, LOCAL_TABLES.apiKeys)).toEqual([]);
    });
    expect(repairs).toEqual([
      `DATA_DIR: repaired index entries a crash left out of step with their items: ${LOCAL_TABLES.apiKeys} ${API_KEYS_TABLE.byKeyIdIndex.name} 1 removed, 0 restored`,
    ]);
  });

  it('says nothing and changes nothing when the directory is consistent, new or repaired', async () => {
    expect(
      await withDynalite(async (tables) => void (await tables.send(new PutCommand({ TableName: LOCAL_TABLES.pets, Item: petItem(5) })))),
    ).toEqual([]);
    await interruptWrite(dataDir, LOCAL_TABLES.pets, null, petItem(6));
    expect(await withDynalite(async () => undefined)).toHaveLength(1);
    expect(
      await withDynalite(async (tables) => {
        expect(await idsIn(tables, allPetsIndex, collection)).toEqual([5]);
      }),
    ).toEqual([]);
  });
});

describe('starting dynalite on a data directory another server holds open', () => {
  it('refuses it, naming it, rather than fail on its first read', async () => {
    await withDynalite(async () => {
      await expect(startDynalite({ port: 0, dataDir })).rejects.toThrow(`DATA_DIR ${dataDir} is in use by another process`);
    });
  });
});
