import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { production } from '../../infra/stages';
import { createLocalClient, ensureTables, startDynalite } from '../../local/dynamodb-local';
import { cacheListHead } from '../../shared/domain/pets/list-head-cache';
import type { PetRecord } from '../../shared/domain/pets/pet-schemas';
import type { ListQuery, PetStore } from '../../shared/domain/pets/pet-store';
import { DynamoPetStore, toItem } from '../../shared/dynamodb/dynamo-pet-store';
import { createdKey } from '../../shared/dynamodb/pets-table';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { entryWriteUnits, indexKeysOf, indexWriteUnits } from './write-units';
import { progress } from './format';
import { seedPets } from './seed';

/** What `npm run bench`'s listing section measures: every combination of these. */
export interface ListingCostOptions {
  readonly petCounts: readonly number[];
  readonly shardCounts: readonly number[];
  readonly limits: readonly number[];
  /** Later pages read per combination, each from a cursor at a random pet. */
  readonly laterPages: number;
  /** First-page requests per second to one instance at which the head cache is judged. */
  readonly cacheRates: readonly number[];
  /** Creates whose write units are counted per shard count. */
  readonly creates: number;
}

/** DynamoDB's documented throughput of one partition (of a table or an index), in units per second. */
export const PARTITION_LIMITS = { readUnitsPerSecond: 3_000, writeUnitsPerSecond: 1_000 } as const;

/** One Query a page issued: the index partition it read and what DynamoDB charged for it. */
export interface QueryCharge {
  readonly partition: string;
  readonly readUnits: number;
}

/** What one page of a listing cost. */
export interface PageCost {
  readonly readUnits: number;
  /** The most any one partition was charged: what bounds the pages per second that partition allows. */
  readonly hottestPartitionUnits: number;
  /** Whether the merge queried a partition twice (a second round trip). */
  readonly secondRound: boolean;
}

export interface ListingCostRow {
  readonly pets: number;
  readonly shards: number;
  readonly limit: number;
  readonly firstPage: PageCost;
  /** Mean over the later pages read. */
  readonly laterPageReadUnits: number;
  /** Share of later pages whose merge needed a second round trip. */
  readonly laterSecondRounds: number;
  /** First-page read units per request with the head cache, at each rate of first-page requests to one instance. */
  readonly cachedFirstPage: readonly { readonly perSecond: number; readonly readUnits: number }[];
}

export interface CreateCostRow {
  readonly shards: number;
  /** Write units per create as DynamoDB charges them: the item, plus its entry in every index it is in. */
  readonly withStatus: number;
  readonly withoutStatus: number;
  /** Write units of one entry (the item rounded up to 1 KB): what each create charges its index partition. */
  readonly entryUnits: number;
  /** What dynalite reports for the same puts: the item alone (it leaves the indexes out). */
  readonly dynaliteReports: number;
}

export interface ListingCostResults {
  readonly options: ListingCostOptions;
  /** The head cache's longest age, production's. */
  readonly cacheMaxAgeMs: number;
  readonly rows: readonly ListingCostRow[];
  readonly creates: readonly CreateCostRow[];
}

/**
 * A page's read units as DynamoDB charges them: as dynalite reports them, except for a Query that finds
 * nothing, which dynalite charges nothing and DynamoDB its smallest read, half a unit.
 */
export function pageCost(queries: readonly QueryCharge[], partitions: number): PageCost {
  const charged = queries.map((query) => ({ ...query, readUnits: Math.max(0.5, query.readUnits) }));
  const byPartition = new Map<string, number>();
  for (const { partition, readUnits } of charged) byPartition.set(partition, (byPartition.get(partition) ?? 0) + readUnits);
  return {
    readUnits: sum(charged.map((query) => query.readUnits)),
    hottestPartitionUnits: Math.max(0, ...byPartition.values()),
    secondRound: queries.length > partitions,
  };
}

/** Pages per second one partition allows when each page charges it `units`. */
export function pagesPerSecondOfPartition(units: number): number {
  return Math.floor(PARTITION_LIMITS.readUnitsPerSecond / units);
}

/** Write units of putting `item`, as DynamoDB charges them: once for the table and once per index entry (./write-units.ts). */
export function writeUnitsOf(item: Record<string, unknown>, indexKeys: readonly (readonly string[])[]): number {
  const stored = marshall(item, { removeUndefinedValues: true });
  return entryWriteUnits(stored) + indexWriteUnits(stored, indexKeys);
}

interface Meter {
  /** The queries since the last call, each with the index partition it read and its units. */
  takeQueries(): QueryCharge[];
  /** The write units dynalite reported for each PutItem since the last call. */
  takeWriteUnits(): number[];
}

/** Records each Query's partition and consumed capacity, asking DynamoDB for it on every request. */
function meter(client: DynamoDBClient): Meter {
  let queries: QueryCharge[] = [];
  let writeUnits: number[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, any>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const units = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      if (context.commandName === 'QueryCommand') {
        const value = input.ExpressionAttributeValues?.[':partition'];
        queries.push({ partition: `${input.IndexName} ${typeof value === 'string' ? value : value?.S}`, readUnits: units });
      } else if (context.commandName === 'PutItemCommand') {
        writeUnits.push(units);
      }
      return result;
    },
    { step: 'initialize', name: 'listingCostMeter' },
  );
  return {
    takeQueries() {
      const taken = queries;
      queries = [];
      return taken;
    },
    takeWriteUnits() {
      const taken = writeUnits;
      writeUnits = [];
      return taken;
    },
  };
}

/**
 * Read units per listing page and write units per create, as DynamoDB would charge them, for every
 * combination of `options`, on an in-process dynalite. Items carry one shard count's index attributes,
 * so each shard count gets its own table: rewriting them would cost a write per item.
 */
export async function measureListingCost(options: ListingCostOptions): Promise<ListingCostResults> {
  const dynamo = await startDynalite({ port: 0 });
  const client = createLocalClient(dynamo.endpoint);
  const metered = meter(client);
  const documents = documentClientOver(client);
  const cacheMaxAgeMs = production.listing.headCacheMs;
  const rows: ListingCostRow[] = [];
  const creates: CreateCostRow[] = [];
  try {
    const tables = new Map<number, { name: string; pets: PetRecord[] }>();
    for (const shards of options.shardCounts) {
      const name = `listing-cost-${shards}`;
      await ensureTables(client, { pets: name, apiKeys: `${name}-keys`, idempotency: `${name}-idempotency` });
      tables.set(shards, { name, pets: [] });
    }
    for (const pets of options.petCounts) {
      for (const shards of options.shardCounts) {
        const table = tables.get(shards)!;
        if (table.pets.length < pets) {
          progress(`listing cost: seeding ${pets.toLocaleString('en')} pets in ${shards} shard${shards === 1 ? '' : 's'}`);
          table.pets.push(...(await seedPets(documents, table.name, pets - table.pets.length, table.pets.length + 1, shards)));
        }
        const store = new DynamoPetStore(documents, table.name, shards);
        for (const limit of options.limits) {
          const readPage = async (query: ListQuery, pageStore: PetStore = store) => {
            await pageStore.list(query);
            return pageCost(metered.takeQueries(), shards);
          };
          const firstPage = await readPage({ limit });
          const later: PageCost[] = [];
          for (let page = 0; page < options.laterPages; page++) {
            const after = table.pets[Math.floor(Math.random() * table.pets.length)]!;
            later.push(await readPage({ limit, after: createdKey(after.createdAt, after.id) }));
          }
          const cachedFirstPage: ListingCostRow['cachedFirstPage'][number][] = [];
          for (const rate of options.cacheRates) {
            // A steady stream to one instance: the clock moves 1/rate s per request, over three cache lifetimes.
            let clock = 0;
            const cached = cacheListHead(store, { maxAgeMs: cacheMaxAgeMs, now: () => clock });
            const requests = 3 * Math.max(1, Math.ceil((rate * cacheMaxAgeMs) / 1000));
            let units = 0;
            for (let request = 0; request < requests; request++, clock += 1000 / rate) {
              units += (await readPage({ limit }, cached)).readUnits;
            }
            cachedFirstPage.push({ perSecond: rate, readUnits: units / requests });
          }
          rows.push({
            pets,
            shards,
            limit,
            firstPage,
            laterPageReadUnits: mean(later.map((page) => page.readUnits)),
            laterSecondRounds: later.filter((page) => page.secondRound).length / Math.max(1, later.length),
            cachedFirstPage,
          });
        }
      }
    }
    for (const shards of options.shardCounts)
      creates.push(await measureCreates(client, documents, tables.get(shards)!.name, shards, options.creates, metered));
  } finally {
    client.destroy();
    await dynamo.close();
  }
  return { options, cacheMaxAgeMs, rows, creates };
}

async function measureCreates(
  client: DynamoDBClient,
  documents: DynamoDBDocumentClient,
  tableName: string,
  shards: number,
  count: number,
  metered: Meter,
): Promise<CreateCostRow> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const indexKeys = indexKeysOf(Table);
  const store = new DynamoPetStore(documents, tableName, shards);
  const charged = { withStatus: [] as number[], withoutStatus: [] as number[], entry: [] as number[] };
  metered.takeWriteUnits();
  for (let index = 0; index < count; index++) {
    const pet: PetRecord = {
      // Far above the seeded ids, so no create collides with them.
      id: 2 ** 40 + index,
      name: `Created pet ${index}`,
      categoryId: 1 + (index % 7),
      createdAt: new Date().toISOString(),
      ...(index % 2 === 0 ? { status: 'available' as const } : {}),
    };
    const token = randomUUID();
    await store.insert(pet, token);
    const item = toItem(pet, token, shards);
    (pet.status === undefined ? charged.withoutStatus : charged.withStatus).push(writeUnitsOf(item, indexKeys));
    charged.entry.push(entryWriteUnits(marshall(item, { removeUndefinedValues: true })));
  }
  return {
    shards,
    withStatus: mean(charged.withStatus),
    withoutStatus: mean(charged.withoutStatus),
    entryUnits: Math.max(...charged.entry),
    dynaliteReports: mean(metered.takeWriteUnits()),
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : sum(values) / values.length;
}
