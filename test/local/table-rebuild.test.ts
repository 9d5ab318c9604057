import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, LOCAL_LISTING, LOCAL_TABLES, startDynalite, tableDefinitions } from '../../local/dynamodb-local';
import { rebuildBackupName } from '../../local/table-rebuild';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { toItem } from '../../shared/dynamodb/dynamo-pet-store';
import { listingAttributes, PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { PET_STATUSES, type PetRecord } from '../../shared/domain/pets/pet-schemas';
import { startServerProcess, type RunningServer } from '../helpers/cli';
import { fetchDocumented } from '../helpers/contract';
import { scanTable, walkPets } from '../helpers/pets';

/**
 * A DATA_DIR kept from before the listing was sharded: its pets table has the unsharded status index
 * and no pets-by-status-shard, which dynalite cannot add to a table. npm start rebuilds it.
 */
const dataDirs: string[] = [];
const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** The pets table as it was created before sharding: the status index on `status` itself. */
function oldPetsDefinition(): CreateTableCommandInput {
  const current = tableDefinitions()[0]!;
  const { allPetsIndex, unshardedByStatusIndex } = PETS_TABLE;
  return {
    ...current,
    AttributeDefinitions: [
      { AttributeName: PETS_TABLE.partitionKey, AttributeType: 'N' },
      { AttributeName: allPetsIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: unshardedByStatusIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: allPetsIndex.sortKey, AttributeType: 'S' },
    ],
    GlobalSecondaryIndexes: [allPetsIndex, unshardedByStatusIndex].map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
  };
}

const pets: PetRecord[] = Array.from({ length: 60 }, (_, index) => ({
  id: 1000 + index,
  name: `Kept ${index}`,
  categoryId: 1,
  createdAt: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString(),
  ...(index % 4 === 3 ? {} : { status: PET_STATUSES[index % 4] }),
}));

/** As the store wrote a pet before sharding: collection "pets", no statusShard. */
function oldItem(pet: PetRecord): Record<string, unknown> {
  const { [PETS_TABLE.byStatusIndex.partitionKey]: _, ...item } = toItem(pet, `token-${pet.id}`, 1);
  return item;
}

async function putAll(client: DynamoDBClient, table: string, items: readonly Record<string, unknown>[]): Promise<void> {
  for (let index = 0; index < items.length; index += 25) {
    const requests = items.slice(index, index + 25).map((item) => ({ PutRequest: { Item: marshall(item) } }));
    await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
  }
}

/** A data directory whose pets table has the old indexes and holds the pets as written then. */
async function oldDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-old-data-'));
  dataDirs.push(dir);
  const dynamoDb = await startDynalite({ port: 0, dataDir: dir });
  const client = createLocalClient(dynamoDb.endpoint);
  try {
    await client.send(new CreateTableCommand(oldPetsDefinition()));
    await putAll(client, LOCAL_TABLES.pets, pets.map(oldItem));
  } finally {
    client.destroy();
    await dynamoDb.close();
  }
  return dir;
}

describe('npm start on a DATA_DIR from before the listing was sharded', () => {
  it('rebuilds the pets table under the current indexes, says so in one line, and lists every kept pet under every filter', async () => {
    const server = await startServerProcess({ DATA_DIR: await oldDataDir() });
    servers.push(server);
    const said = server
      .output()
      .split('\n')
      .filter((line) => line.includes('DATA_DIR: rebuilt'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(
      `${LOCAL_TABLES.pets} (added ${PETS_TABLE.byStatusIndex.name}, dropped ${PETS_TABLE.unshardedByStatusIndex.name}; ${pets.length} items kept)`,
    );
    const client = {
      request: (path: string, init: RequestInit = {}) =>
        fetchDocumented(`${server.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${server.apiKey}` } }),
    };
    for (const status of [undefined, ...PET_STATUSES]) {
      const listed = (await walkPets(client, { status })).pets.map((pet) => pet.id);
      const expected = pets
        .filter((pet) => status === undefined || pet.status === status)
        .map((pet) => pet.id)
        .reverse();
      expect(listed, `listing ${status ?? 'all pets'}`).toEqual(expected);
    }
  }, 120_000);
});

describe('ensureTables after a rebuild cut short', () => {
  it('finishes it from the backup: every item back, with its listing attributes, and the backup gone', async () => {
    const dynamoDb = await startDynalite({ port: 0 });
    const client = createLocalClient(dynamoDb.endpoint);
    try {
      // Killed after the old table was deleted and the new one created, before the items were back.
      const backup = rebuildBackupName(LOCAL_TABLES.pets);
      const { KeySchema, AttributeDefinitions } = tableDefinitions()[0]!;
      await client.send(
        new CreateTableCommand({
          TableName: backup,
          BillingMode: 'PAY_PER_REQUEST',
          KeySchema,
          AttributeDefinitions: AttributeDefinitions!.slice(0, 1),
        }),
      );
      await putAll(client, backup, pets.map(oldItem));
      const said: string[] = [];
      await ensureTables(client, LOCAL_TABLES, { onRebuild: (message) => said.push(message) });

      expect(said).toEqual([expect.stringContaining(`${LOCAL_TABLES.pets} (finished after an interruption; ${pets.length} items kept)`)]);
      const items = await scanTable(documentClientOver(client), LOCAL_TABLES.pets);
      expect(items.map((item) => item.id).toSorted()).toEqual(pets.map((pet) => pet.id));
      for (const item of items) expect(item).toMatchObject(listingAttributes(item as unknown as PetRecord, LOCAL_LISTING.shards));
      await expect(client.send(new DescribeTableCommand({ TableName: backup }))).rejects.toThrow(/not found/i);

      const again: string[] = [];
      await ensureTables(client, LOCAL_TABLES, { onRebuild: (message) => again.push(message) });
      expect(again).toEqual([]);
    } finally {
      client.destroy();
      await dynamoDb.close();
    }
  }, 30_000);
});
