import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalClient,
  ensureTables,
  LOCAL_LISTING,
  LOCAL_TABLES,
  startDynalite,
  writeInBatches,
  type LocalDynamoDb,
} from '../../local/dynamodb-local';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { DynamoPetStore, toItem } from '../../shared/dynamodb/dynamo-pet-store';
import { listingAttributes, listingShardKey, listingShardOf, PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { PET_STATUSES, type PetRecord, type PetStatus } from '../../shared/domain/pets/pet-schemas';
import { describeMigration, migrateListing, type MigrationOptions } from '../../tools/migrate';
import { staging } from '../../infra/stages';
import { writeShardsOf } from '../../shared/facts/listing';
import { runCli } from '../helpers/cli';
import { startFakeCloudFormation } from '../helpers/fake-cloudformation';
import { scanTable } from '../helpers/pets';

/**
 * `npm run migrate` on in-process dynalite: pets written before the listing was sharded (collection
 * "pets", no statusShard) are given the listing attributes of the stage's shards, and every pet is listed.
 */
let dynamoDb: LocalDynamoDb;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let tableCount = 0;
const workDir = mkdtempSync(join(tmpdir(), 'animal-store-migrate-'));
const shards: number = LOCAL_LISTING.shards;

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  client = createLocalClient(dynamoDb.endpoint);
  documents = documentClientOver(client);
});
afterAll(async () => {
  client?.destroy();
  await dynamoDb?.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** A fresh pets table under the current definition, and a checkpoint file of its own. */
async function newTable(): Promise<{ table: string; checkpointFile: string }> {
  const n = ++tableCount;
  const names = { pets: `pets-${n}`, apiKeys: `keys-${n}`, idempotency: `idempotency-${n}` };
  await ensureTables(client, names);
  return { table: names.pets, checkpointFile: join(workDir, `table-${n}.json`) };
}

/**
 * Pets of every status and none, one a second, ids counting up from 1. The status turns with the id's
 * eighths as well as the id, so every shard holds pets of every status.
 */
function petsOf(count: number): PetRecord[] {
  return Array.from({ length: count }, (_, index) => {
    const status = [...PET_STATUSES, undefined][(index + (index >> 3)) % (PET_STATUSES.length + 1)];
    return {
      id: index + 1,
      name: `Old pet ${index + 1}`,
      categoryId: 1,
      createdAt: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString(),
      ...(status === undefined ? {} : { status }),
    };
  });
}

/** An item as the store wrote it before sharding: one listing partition (collection "pets"), no statusShard. */
function oldItem(pet: PetRecord): Record<string, unknown> {
  const { [PETS_TABLE.byStatusIndex.partitionKey]: _, ...item } = toItem(pet, `token-${pet.id}`, 1);
  return item;
}

/** Writes the items with BatchWriteItem, several batches at once, as the bench's seeding does. */
async function seed(table: string, items: readonly Record<string, unknown>[]): Promise<void> {
  await writeInBatches(
    documents,
    table,
    items.map((Item) => ({ PutRequest: { Item } })),
    8,
  );
}

function migrate(target: { table: string; checkpointFile: string }, options: Partial<MigrationOptions> = {}) {
  return migrateListing({ client, shards, ...target, ...options });
}

/** How many items one partition of an index holds. */
async function countIn(table: string, index: { name: string; partitionKey: string }, value: string): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: table,
        IndexName: index.name,
        KeyConditionExpression: '#key = :value',
        ExpressionAttributeNames: { '#key': index.partitionKey },
        ExpressionAttributeValues: { ':value': value },
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/** Pets per listing partition, per status (undefined: the all-pets index), as the table should hold them at `shards`. */
function expectedCounts(pets: readonly PetRecord[], status: PetStatus | undefined): number[] {
  const counts = Array.from({ length: shards }, () => 0);
  for (const pet of pets) if (status === undefined || pet.status === status) counts[listingShardOf(pet.id, shards)]!++;
  return counts;
}

async function countsIn(table: string, status: PetStatus | undefined): Promise<number[]> {
  const index = status === undefined ? PETS_TABLE.allPetsIndex : PETS_TABLE.byStatusIndex;
  return Promise.all(
    Array.from({ length: shards }, (_, shard) => countIn(table, index, listingShardKey(status ?? PETS_TABLE.collection, shard))),
  );
}

/** Every page of one listing through the sharded store, as listPets reads it. */
async function walk(table: string, status: PetStatus | undefined): Promise<number[]> {
  const store = new DynamoPetStore(documents, table, LOCAL_LISTING);
  const ids: number[] = [];
  let after: PetRecord | undefined;
  for (;;) {
    const page = await store.list({ status, limit: 1000, after });
    ids.push(...page.pets.map((pet) => pet.id));
    if (!page.hasMore) return ids;
    after = page.pets.at(-1);
  }
}

/** Newest first, as a listing orders them. */
function newestFirst(pets: readonly PetRecord[], status?: PetStatus): number[] {
  return pets
    .filter((pet) => status === undefined || pet.status === status)
    .toSorted((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id)
    .map((pet) => pet.id);
}

/** Every item of the table carries exactly the listing attributes of `shards` shards. */
async function expectEveryItemRight(table: string, pets: readonly PetRecord[], atShards = shards): Promise<void> {
  const items = await scanTable(documents, table);
  expect(items).toHaveLength(pets.length);
  const wrong = items.filter((item) => {
    const wanted = listingAttributes(item as unknown as PetRecord, atShards);
    const carried = {
      [PETS_TABLE.allPetsIndex.partitionKey]: item[PETS_TABLE.allPetsIndex.partitionKey],
      [PETS_TABLE.allPetsIndex.sortKey]: item[PETS_TABLE.allPetsIndex.sortKey],
      ...(item[PETS_TABLE.byStatusIndex.partitionKey] === undefined
        ? {}
        : { [PETS_TABLE.byStatusIndex.partitionKey]: item[PETS_TABLE.byStatusIndex.partitionKey] }),
    };
    return JSON.stringify(carried) !== JSON.stringify(wanted);
  });
  expect(wrong.map((item) => item.id)).toEqual([]);
}

/**
 * The migration's scale test: MIGRATE_TEST_PETS=100000 runs it at the outcome's 100,000 pets (minutes on
 * dynalite, docs/operations.md); by default a size that keeps the suite quick, through the same code.
 */
const SCALE = Number(process.env.MIGRATE_TEST_PETS || 4_000);

/** Pets written before sharding that were already right: shard 0 (collection "pets") and no status to shard. */
const alreadyRightOf = (pets: readonly PetRecord[]) =>
  pets.filter((pet) => listingShardOf(pet.id, shards) === 0 && pet.status === undefined).length;

describe(`npm run migrate on ${SCALE} pets written before sharding`, () => {
  const pets = petsOf(SCALE);
  /** Seeding and two runs at about 100 updates a second on a loaded machine, with room to spare. */
  const timeout = 60_000 + SCALE * 20;
  let target: { table: string; checkpointFile: string };

  beforeAll(async () => {
    target = await newTable();
    await seed(target.table, pets.map(oldItem));
  }, timeout);

  it('starts from a table whose sharded status index lists none of them, and whose shard 0 holds them all', async () => {
    expect(await countsIn(target.table, 'available')).toEqual(Array.from({ length: shards }, () => 0));
    expect((await countsIn(target.table, undefined))[0]).toBe(pets.length);
  });

  it(
    'gives every pet its shards: each listing partition holds exactly its pets, and a whole status walks newest first',
    async () => {
      const result = await migrate(target, { concurrency: 32 });
      const alreadyRight = alreadyRightOf(pets);
      expect(result).toMatchObject({ finished: true, scanned: pets.length, updated: pets.length - alreadyRight, alreadyRight, gone: 0 });
      for (const status of [undefined, ...PET_STATUSES]) {
        expect(await countsIn(target.table, status), `listing partitions of ${status ?? 'all pets'}`).toEqual(expectedCounts(pets, status));
      }
      expect(await walk(target.table, 'pending')).toEqual(newestFirst(pets, 'pending'));
      expect(existsSync(target.checkpointFile)).toBe(false);
      // The figure docs/operations.md quotes per 100,000 pets comes from this line.
      console.info(describeMigration(target.table, shards, result));
    },
    timeout,
  );

  it(
    'writes nothing the second time: every pet is already right',
    async () => {
      const result = await migrate(target);
      expect(result).toMatchObject({ finished: true, scanned: pets.length, updated: 0, alreadyRight: pets.length });
    },
    timeout,
  );
});

describe('npm run migrate cut short', () => {
  const pets = petsOf(1_000);
  const alreadyRight = alreadyRightOf(pets);

  it('keeps its position after each finished page, and the next run resumes there and finishes every pet', async () => {
    const target = await newTable();
    await seed(target.table, pets.map(oldItem));

    const cut = await migrate(target, { pageSize: 200, maxPages: 2 });
    expect(cut).toMatchObject({ finished: false, scanned: 400 });
    const checkpoint = JSON.parse(readFileSync(target.checkpointFile, 'utf8'));
    expect(checkpoint).toMatchObject({ table: target.table, shards, counts: { scanned: 400, updated: cut.updated } });
    // The table holds what the two pages did and nothing more: only items written since carry a statusShard.
    const migrated = (await scanTable(documents, target.table)).filter((item) => item[PETS_TABLE.byStatusIndex.partitionKey] !== undefined);
    expect(migrated.length).toBeGreaterThan(0);
    expect(migrated.length).toBeLessThanOrEqual(cut.updated);

    const said: string[] = [];
    const resumed = await migrate(target, { pageSize: 200, say: (line) => said.push(line) });
    expect(said).toEqual([expect.stringContaining('Resuming after 400 pets scanned')]);
    // Nothing before the checkpoint is read again: the totals are the table's, once.
    expect(resumed).toMatchObject({ finished: true, scanned: pets.length, updated: pets.length - alreadyRight, alreadyRight });
    expect(existsSync(target.checkpointFile)).toBe(false);
    await expectEveryItemRight(target.table, pets);
    expect(await walk(target.table, undefined)).toEqual(newestFirst(pets));
  }, 60_000);

  it('stops at Ctrl-C once the updates in flight are done, and the rerun finishes the job', async () => {
    const target = await newTable();
    await seed(target.table, pets.map(oldItem));
    const stop = new AbortController();
    const interrupted = migrate(target, { pageSize: 100, concurrency: 4, signal: stop.signal });
    while (!existsSync(target.checkpointFile)) await setTimeout(2);
    stop.abort();
    const cut = await interrupted;
    expect(cut.finished).toBe(false);
    expect(cut.scanned).toBeLessThan(pets.length);
    expect(existsSync(target.checkpointFile)).toBe(true);

    const resumed = await migrate(target, { pageSize: 100 });
    expect(resumed).toMatchObject({ finished: true, scanned: pets.length });
    // The updates Ctrl-C let finish in the page it cut are not in the checkpoint: that page is read again and finds them right.
    expect(resumed.updated + resumed.alreadyRight).toBe(pets.length);
    await expectEveryItemRight(target.table, pets);
  }, 60_000);

  it('starts over with --restart, and when the checkpoint was for another shard count', async () => {
    const target = await newTable();
    await seed(target.table, pets.map(oldItem));
    await migrate(target, { pageSize: 200, maxPages: 1 });
    const said: string[] = [];
    const other = await migrate(target, { shards: 2, pageSize: 200, say: (line) => said.push(line) });
    expect(said).toEqual([expect.stringContaining(`at ${shards} shards; starting from the table's start`)]);
    expect(other).toMatchObject({ finished: true, scanned: pets.length });
    await expectEveryItemRight(target.table, pets, 2);

    // Back at the stage's count for one page, then --restart scans the whole table: that page is found right.
    const onePage = await migrate(target, { pageSize: 200, maxPages: 1 });
    const restarted = await migrate(target, { restart: true, pageSize: 200 });
    expect(restarted).toMatchObject({ finished: true, scanned: pets.length });
    expect(restarted.alreadyRight).toBeGreaterThanOrEqual(onePage.updated);
    expect(restarted.updated + restarted.alreadyRight).toBe(pets.length);
    await expectEveryItemRight(target.table, pets);
  }, 60_000);
});

describe('npm run migrate on a mixed table', () => {
  it('moves items between shard counts and takes away a statusShard a pet without status should not carry', async () => {
    const target = await newTable();
    const pets = petsOf(200);
    // Already at the stage's count, at another count, and before sharding: a table a lower count is migrated onto.
    await seed(target.table, [
      ...pets.slice(0, 50).map((pet) => toItem(pet, 't', shards)),
      ...pets.slice(50, 100).map((pet) => toItem(pet, 't', 16)),
      ...pets.slice(100, 200).map(oldItem),
    ]);
    const withoutStatus = pets.find((pet) => pet.status === undefined)!;
    await documents.send(
      new BatchWriteCommand({
        RequestItems: {
          [target.table]: [{ PutRequest: { Item: { ...oldItem(withoutStatus), [PETS_TABLE.byStatusIndex.partitionKey]: 'available#3' } } }],
        },
      }),
    );
    const result = await migrate(target);
    const rightAtStart = pets.slice(0, 50).filter((pet) => pet.id !== withoutStatus.id).length;
    const rightAt16AndHere = pets.slice(50, 100).filter((pet) => listingShardOf(pet.id, 16) === listingShardOf(pet.id, shards)).length;
    expect(result).toMatchObject({
      finished: true,
      scanned: 200,
      alreadyRight: rightAtStart + rightAt16AndHere + alreadyRightOf(pets.slice(100)),
    });
    await expectEveryItemRight(target.table, pets);
    for (const status of [undefined, ...PET_STATUSES]) expect(await countsIn(target.table, status)).toEqual(expectedCounts(pets, status));
  }, 30_000);
});

describe('npm run migrate (the command)', () => {
  const run = (args: string[]) => runCli('tools/migrate.ts', args, { AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' });

  it.each([
    [['--stage', 'prod'], 'Unknown stage "prod"'],
    [['--local', '--stage', 'staging'], 'Choose one'],
    [[], 'Say which table'],
    [['--local', '--concurrency', 'lots'], '--concurrency must be'],
    [['--local', '--shards', '0'], '--shards must be'],
    [['--local', '--table', 'pets'], "Unknown option '--table'"],
  ])(
    'refuses %j with one line and exit 2',
    async (args, message) => {
      const result = await run(args);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(message)]);
      expect(result.stdout).toBe('');
    },
    30_000,
  );

  it("migrates the running local API's pets table with --local and ends with one summary line", async () => {
    // The local stage's own table names, on this test's dynalite.
    await ensureTables(client);
    const pets = petsOf(300);
    await seed(LOCAL_TABLES.pets, pets.map(oldItem));
    const result = await run(['--local', '--endpoint', dynamoDb.endpoint, '--checkpoint', join(workDir, 'local.json')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const alreadyRight = alreadyRightOf(pets);
    expect(result.stdout).toMatch(
      new RegExp(
        `^Migrated ${LOCAL_TABLES.pets} to ${shards} listing shards: 300 scanned, ${300 - alreadyRight} updated, ${alreadyRight} already right in [\\d.]+ s\\.\n$`,
      ),
    );
    await expectEveryItemRight(LOCAL_TABLES.pets, pets);
  }, 30_000);

  it("migrates a deployed stage's pets table, found from its stack's PetsTableName output, to the shards the stage's creates write", async () => {
    const target = await newTable();
    const pets = petsOf(200);
    await seed(target.table, pets.map(oldItem));
    const cloudFormation = await startFakeCloudFormation([
      { stackName: staging.stackName, account: staging.account, region: staging.region, outputs: { PetsTableName: target.table } },
    ]);
    try {
      const result = await runCli('tools/migrate.ts', ['--stage', staging.name, '--checkpoint', join(workDir, 'staging.json')], {
        AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: dynamoDb.endpoint,
        AWS_ACCESS_KEY_ID: 'operator',
        AWS_SECRET_ACCESS_KEY: 'operator',
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const shards = writeShardsOf(staging.listing);
      expect(result.stdout).toContain(`Migrated ${target.table} to ${shards} listing shards: 200 scanned`);
      await expectEveryItemRight(target.table, pets, shards);
    } finally {
      await cloudFormation.close();
    }
  }, 30_000);

  it('names the policy to attach when the credentials may not read the stage’s stack, and touches no table', async () => {
    const cloudFormation = await startFakeCloudFormation([
      { stackName: staging.stackName, account: staging.account, region: staging.region, outputs: {}, denied: true },
    ]);
    try {
      const result = await runCli('tools/migrate.ts', ['--stage', staging.name, '--checkpoint', join(workDir, 'denied.json')], {
        AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
        AWS_ACCESS_KEY_ID: 'operator',
        AWS_SECRET_ACCESS_KEY: 'operator',
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("attach the stack's ListingMigrationPolicyArn output policy to your role or group");
      expect(existsSync(join(workDir, 'denied.json'))).toBe(false);
    } finally {
      await cloudFormation.close();
    }
  }, 30_000);
});
