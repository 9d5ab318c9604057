import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import { LISTING } from '../../../shared/facts/listing';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';
import { DynamoPetStore } from '../../../shared/dynamodb/dynamo-pet-store';
import { createdKey, listingShardKey, PETS_TABLE } from '../../../shared/dynamodb/pets-table';
import { decodeCursor, encodeCursor } from '../../../shared/domain/pets/cursor';
import { InvalidCursorError } from '../../../shared/domain/pets/pet-errors';
import { listPets, type PetsPage } from '../../../shared/domain/pets/pet-operations';
import { MAX_ID, PET_STATUSES, toPet, type PetRecord, type PetStatus } from '../../../shared/domain/pets/pet-schemas';

/**
 * Sharding changes how a listing is read, not what it returns. A fixed seed, so a
 * failure repeats exactly; the run counts keep the file within seconds on a loaded 2-core machine.
 */
const SEED = 20261127;
const RUNS = 15;
const MAX_COMMANDS = 40;
/** Pets in the table before the first command, so that walks have pages from the start. */
const INITIAL_PETS = 60;

const SECRET = 'a-secret-of-at-least-thirty-two-characters';
/** A few milliseconds only, so that many pets share one and the id alone orders them. */
const BASE_TIME = Date.UTC(2026, 10, 27);
const MILLISECONDS = 4;

let dynamoDb: LocalDynamoDb;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
/** The index partitions the store queried since the last reset, in order: each one query. */
const queried: string[] = [];
let tableCount = 0;

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  client = createLocalClient(dynamoDb.endpoint);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') {
        // Marshalled to DynamoDB's JSON by now ({ S: value }) when the query came through the document client.
        const input = args.input as { ExpressionAttributeValues?: Record<string, unknown> };
        const value = input.ExpressionAttributeValues?.[':partition'];
        queried.push(typeof value === 'string' ? value : ((value as { S?: string } | undefined)?.S ?? ''));
      }
      return next(args);
    },
    { step: 'initialize' },
  );
  documents = documentClientOver(client);
});
afterAll(async () => {
  client?.destroy();
  await dynamoDb?.close();
});
beforeEach(() => {
  queried.length = 0;
});

/** A fresh, empty pets table (with its sibling tables, as ensureTables makes them). */
async function newTable(): Promise<string> {
  const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
  await ensureTables(client, names);
  return names.pets;
}

/** A pet's place in the reference model. */
type Place = Pick<PetRecord, 'id' | 'createdAt'>;

/** The reference order: newest first, then the larger id first, compared as numbers. */
function isBefore(a: Place, b: Place): boolean {
  return a.createdAt !== b.createdAt ? a.createdAt > b.createdAt : a.id > b.id;
}

/** What a listing page must be, read from the reference model: every matching pet after `after`, in order. */
function expectedPage(pets: readonly PetRecord[], query: { status?: PetStatus; limit: number; after?: Place }): PetsPage {
  const { status, limit, after } = query;
  const matching = pets.filter((pet) => (status === undefined || pet.status === status) && (after === undefined || isBefore(after, pet)));
  const page = matching.slice(0, limit);
  const last = page.at(-1);
  // The store's position is the sort key of the page's last pet.
  return { pets: page.map(toPet), ...(matching.length > limit && last ? { next: createdKey(last.createdAt, last.id) } : {}) };
}

/** The pet the model's page ended on: where the walk goes on from. */
function lastOf(pets: readonly PetRecord[], page: PetsPage): Place {
  const last = page.pets.at(-1)!;
  return pets.find((candidate) => candidate.id === last.id)!;
}

/** A page as the handler serves it: the cursor it would put in the next link, signed and bound to the filter. */
async function servePage(store: DynamoPetStore, query: { status?: PetStatus; limit: number; cursor?: string }) {
  const filter = { status: query.status };
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, filter, SECRET);
  const page = await listPets(store, { ...filter, limit: query.limit, after });
  return { page, cursor: page.next === undefined ? undefined : encodeCursor(page.next, filter, SECRET) };
}

function pet(id: number, millisecond: number, status?: PetStatus): PetRecord {
  const record: PetRecord = { id, name: `pet ${id}`, categoryId: 1, createdAt: new Date(BASE_TIME + millisecond).toISOString() };
  return status === undefined ? record : { ...record, status };
}

interface Walk {
  readonly status?: PetStatus;
  /** Where the model says the next page starts. */
  after: Place;
  /** The cursor the store's last page handed out. */
  cursor: string;
}

interface Model {
  /** Every pet inserted, in the reference order. */
  readonly pets: PetRecord[];
  /** Walks with a next page still to take. */
  readonly walks: Walk[];
}

interface Real {
  readonly store: DynamoPetStore;
}

/** Pets created together, as concurrent createPet calls would: between any two pages of any walk. */
class InsertPets implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pets: readonly PetRecord[]) {}
  check(model: Readonly<Model>): boolean {
    return this.pets.every(({ id }) => !model.pets.some((existing) => existing.id === id));
  }
  async run(model: Model, { store }: Real): Promise<void> {
    const results = await Promise.all(this.pets.map((created) => store.insert(created, `request ${created.id}`)));
    expect(results.every(({ outcome }) => outcome === 'inserted')).toBe(true);
    model.pets.push(...this.pets);
    model.pets.sort((a, b) => (isBefore(a, b) ? -1 : 1));
  }
  toString(): string {
    return `insert ${this.pets.map((created) => `${created.id}@${created.createdAt.slice(20, 23)}${created.status ? `/${created.status}` : ''}`).join(' ')}`;
  }
}

/** The first page of a new walk; the walk stays open while the model says more pets follow. */
class StartWalk implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly status: PetStatus | undefined,
    readonly limit: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, { store }: Real): Promise<void> {
    const { page, cursor } = await servePage(store, { status: this.status, limit: this.limit });
    const expected = expectedPage(model.pets, { status: this.status, limit: this.limit });
    expect(page).toEqual(expected);
    if (expected.next !== undefined && cursor !== undefined)
      model.walks.push({ status: this.status, after: lastOf(model.pets, expected), cursor });
  }
  toString(): string {
    return `walk status=${this.status ?? 'any'} limit=${this.limit}`;
  }
}

/**
 * The next page of one open walk, with a limit that may differ from its last page's, as the contract
 * allows; with no walk open, the first page of a new one, so that no command is drawn in vain.
 */
class NextPage implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly status: PetStatus | undefined,
    readonly limit: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    if (model.walks.length === 0) return new StartWalk(this.status, this.limit).run(model, real);
    const index = this.pick % model.walks.length;
    const walk = model.walks[index]!;
    const otherFilter = walk.status === undefined ? { status: PET_STATUSES[0] } : {};
    expect(() => decodeCursor(walk.cursor, otherFilter, SECRET)).toThrow(InvalidCursorError);
    const { page, cursor } = await servePage(real.store, { status: walk.status, limit: this.limit, cursor: walk.cursor });
    const expected = expectedPage(model.pets, { status: walk.status, limit: this.limit, after: walk.after });
    expect(page).toEqual(expected);
    if (expected.next !== undefined && cursor !== undefined) {
      walk.after = lastOf(model.pets, expected);
      walk.cursor = cursor;
    } else {
      model.walks.splice(index, 1);
    }
  }
  toString(): string {
    return `next page of open walk #${this.pick} (else walk status=${this.status ?? 'any'}) limit=${this.limit}`;
  }
}

/** None, or one of the statuses: a walk's filter, and a pet's status. */
const statusArbitrary = fc.constantFrom(undefined, ...PET_STATUSES);
/** Small ids test the sort key's padding, huge ones the whole range, multiples of the shard count crowd one shard. */
const idArbitrary = fc.oneof(
  fc.integer({ min: 1, max: 1_000 }),
  fc.integer({ min: 1, max: MAX_ID }),
  fc.integer({ min: 1, max: 10_000 }).map((n) => n * LISTING.shards),
);
const petArbitrary = fc
  .record({
    id: idArbitrary,
    millisecond: fc.integer({ min: 0, max: MILLISECONDS - 1 }),
    status: statusArbitrary,
  })
  .map(({ id, millisecond, status }) => pet(id, millisecond, status));
const limitArbitrary = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 100 }), weight: 1 },
);

const petsArbitrary = (maxLength: number) =>
  fc.uniqueArray(petArbitrary, { minLength: 1, maxLength, size: 'max', selector: (created) => created.id });
/** Mostly pages of open walks, the thing under test; creates and new walks between them. */
const commandArbitraries = [
  petsArbitrary(4).map((pets) => new InsertPets(pets)),
  fc.tuple(statusArbitrary, limitArbitrary).map(([status, limit]) => new StartWalk(status, limit)),
  ...Array.from({ length: 3 }, () =>
    fc.tuple(fc.nat(), statusArbitrary, limitArbitrary).map(([pick, status, limit]) => new NextPage(pick, status, limit)),
  ),
];

describe.each([
  ['at one shard', 1],
  [`at every stage's ${LISTING.shards} shards`, LISTING.shards],
])('every walk through the listings %s', (_, listing) => {
  it('equals the reference model page by page: newest first, same-millisecond pets by id, none duplicated or missed while pets are created between pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        petsArbitrary(INITIAL_PETS),
        fc.commands(commandArbitraries, { maxCommands: MAX_COMMANDS, size: 'max' }),
        async (initial, commands) => {
          const store = new DynamoPetStore(documents, await newTable(), listing);
          const model: Model = { pets: [], walks: [] };
          await new InsertPets(initial).run(model, { store });
          await fc.asyncModelRun(() => ({ model, real: { store } }), commands);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

/** Stores every pet, each under a request of its own; a taken id would silently leave the model wrong. */
async function insertAll(store: DynamoPetStore, pets: readonly PetRecord[]): Promise<void> {
  const results = await Promise.all(pets.map((created) => store.insert(created, `request ${created.id}`)));
  expect(results.filter(({ outcome }) => outcome !== 'inserted')).toEqual([]);
}

/** Every page of a walk from `cursor` to the end, as ids. */
async function walkFrom(store: DynamoPetStore, query: { status?: PetStatus; limit: number; cursor?: string }): Promise<number[]> {
  const ids: number[] = [];
  let cursor = query.cursor;
  do {
    const served = await servePage(store, { ...query, cursor });
    ids.push(...served.page.pets.map(({ id }) => id));
    cursor = served.cursor;
  } while (cursor !== undefined);
  return ids;
}

describe('a sharded listing', () => {
  it('comes out right when a page sits in one shard: only that shard is queried again, for the rest', async () => {
    const store = new DynamoPetStore(documents, await newTable(), LISTING.shards);
    const crowded = 3;
    // The 25 newest pets all live in one shard; older ones spread over every shard.
    const newest = Array.from({ length: 25 }, (_, n) => pet((n + 1) * LISTING.shards + crowded, 1));
    const older = Array.from({ length: 16 }, (_, n) => pet(1_000 + n, 0));
    await insertAll(store, [...newest, ...older]);
    const model = [...newest, ...older].sort((a, b) => (isBefore(a, b) ? -1 : 1));

    const { page } = await servePage(store, { limit: 20 });
    expect(page).toEqual(expectedPage(model, { limit: 20 }));
    const crowdedShard = listingShardKey(PETS_TABLE.collection, crowded);
    expect(queried.filter((partition) => partition === crowdedShard)).toHaveLength(2);
    expect(new Set(queried).size).toBe(LISTING.shards);

    expect(await walkFrom(store, { limit: 7 })).toEqual(model.map(({ id }) => id));
  });

  it.each([
    ['every pet', undefined],
    ['one status', 'available'],
  ] as const)(
    'misses no pet of %s while the shard count is raised, and moves none: each release reads every shard written to',
    async (_, status) => {
      // The raise (docs/operations.md, "Changing the listing shard count"): release 1 reads 4 shards while
      // creates still go to 2; release 2 creates into all 4. No pet changes shard, so no walk can miss one.
      const table = await newTable();
      const atTwo = new DynamoPetStore(documents, table, 2);
      const atFour = new DynamoPetStore(documents, table, 4);
      const statusOf = (n: number) => PET_STATUSES[n % PET_STATUSES.length];
      const initial = Array.from({ length: 30 }, (_, n) => pet(n + 1, n % MILLISECONDS, statusOf(n)));
      await insertAll(atTwo, initial);
      const matching = (of: readonly PetRecord[]) =>
        of.filter((created) => status === undefined || created.status === status).sort((a, b) => (isBefore(a, b) ? -1 : 1));
      const idsOf = (of: readonly { readonly id: number }[]) => of.map(({ id }) => id);

      const first = await servePage(atTwo, { status, limit: 3 });
      // Release 1 serves beside the old version: creates still go to 2 shards, its pages read 4.
      const duringRelease1 = Array.from({ length: 10 }, (_, n) => pet(100 + n, MILLISECONDS + n, statusOf(n)));
      await insertAll(atTwo, duringRelease1);
      const second = await servePage(atFour, { status, limit: 3, cursor: first.cursor });
      // Release 2: creates go to all 4 shards.
      const duringRelease2 = Array.from({ length: 10 }, (_, n) => pet(200 + n, 2 * MILLISECONDS + n, statusOf(n)));
      await insertAll(atFour, duringRelease2);
      const rest = await walkFrom(atFour, { status, limit: 4, cursor: second.cursor });

      // The walk began before the new pets: newest first, it goes on through every older one.
      expect([...idsOf(first.page.pets), ...idsOf(second.page.pets), ...rest]).toEqual(idsOf(matching(initial)));
      // A walk started now finds every pet, whichever count it was created under.
      expect(await walkFrom(atFour, { status, limit: 7 })).toEqual(idsOf(matching([...initial, ...duringRelease1, ...duringRelease2])));
    },
  );
});
