import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { ENV } from '../../shared/facts/environment';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import type { PartitionLimits } from '../helpers/fault-proxy';
import { expectError } from '../helpers/http';
import { routeFunctionsOnly, startFaultyApi, type FaultyApi } from '../helpers/local-api';
import { newPet, postPet, storedPets, type PetBody } from '../helpers/pets';

/**
 * The listing design against DynamoDB's per-partition limits, emulated by the fault proxy and scaled
 * down so the local API can exceed them. Unsharded (one listing shard), every pet is written to one
 * `pets-by-creation` partition and every unfiltered listing reads the head of that same partition:
 * clients see 503 service_unavailable once its bucket is spent, at the rate the bucket predicts. At the
 * local stage's settings (production's shard count) creates spread over the shards, so a drive at several
 * times one partition's write limit reaches no client as a throttle; a first page still reads every
 * shard, so listings are bounded by one partition's reads (docs/data-model.md: far above the stages' throttles).
 */

/** Clients sending at once, each as soon as its previous request was answered (or its slot, when paced, has come). */
const CLIENTS = 8;
const DRIVE_SECONDS = 2;
const { allPetsIndex } = PETS_TABLE;
const HEAD = { table: LOCAL_TABLES.pets, index: allPetsIndex.name, value: PETS_TABLE.collection };
/** DynamoDB's documented per-partition throughput, before the scale each test chooses. */
const DYNAMODB_PARTITION = { writeUnitsPerSecond: 1_000, readUnitsPerSecond: 3_000 } as const;
/** An eventually consistent read of items under 4 KB in all: what a listing's query of one partition costs. */
const UNITS_PER_QUERY = 0.5;

/**
 * Listing drives: two clients. A first page of 20 (21 items wanted) is one query per shard, every shard
 * charged half a unit per page.
 */
const LIST_CLIENTS = 2;
/** The default first page: 20 pets. */
const HEAD_PAGE = '/pets';
/** 1.5 read units a second per partition: one partition serves 3 head pages a second, 9 over a drive (bucket included). */
const READ_LIMITS: PartitionLimits = { ...DYNAMODB_PARTITION, scale: 1 / 2_000 };
const readsPerSecond = READ_LIMITS.readUnitsPerSecond * READ_LIMITS.scale;

interface Answered {
  readonly status: number;
  /** The answer, its body already read (kept in `body`), so the client's connection is reused at once. */
  readonly response: Response;
  readonly body: string;
}

interface Drive {
  /** How many clients send at once; `CLIENTS` unless given. */
  readonly clients?: number;
  /** Paces the clients together to this many requests a second; as fast as answered when omitted. */
  readonly perSecond?: number;
}

/** Clients send `request` for `DRIVE_SECONDS`; every answer, and how long it took. */
async function drive(request: () => Promise<Response>, { clients = CLIENTS, perSecond }: Drive = {}) {
  const answers: Answered[] = [];
  const started = performance.now();
  const until = started + DRIVE_SECONDS * 1000;
  let slots = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (;;) {
        const at = perSecond === undefined ? performance.now() : started + (slots++ * 1000) / perSecond;
        if (at >= until) return;
        const early = at - performance.now();
        if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
        const response = await request();
        answers.push({ status: response.status, response, body: await response.text() });
      }
    }),
  );
  return { answers, seconds: (performance.now() - started) / 1000 };
}

/** A token bucket holding one second's worth at `perSecond`, starting full, lets this many units through in `seconds`. */
function unitsWithin(perSecond: number, seconds: number): number {
  return perSecond * (1 + seconds);
}

/** What warms an API: so many clients sending one request each at once, cold-starting that many instances of its function. */
type WarmUp = readonly [clients: number, request: (api: FaultyApi['api']) => Promise<Response>];

/** Warms `faulty`'s functions, so the limits meet warm functions; the authorizer caches the key's verdict meanwhile. */
async function warmUp(faulty: FaultyApi, warmUps: readonly WarmUp[]): Promise<void> {
  for (const [clients, request] of warmUps) {
    await Promise.all(Array.from({ length: clients }, () => request(faulty.api).then((response) => response.arrayBuffer())));
  }
}

const listHead = (limit: number) => (api: FaultyApi['api']) => api.request(`/pets?limit=${limit}`);
const createOne = (body: Record<string, unknown>) => (api: FaultyApi['api']) => postPet(api, newPet(body));

async function expectUnavailable(answers: Answered[]): Promise<void> {
  for (const { response, body } of answers.filter((answer) => answer.status === 503)) {
    await expectError(new Response(body, { status: response.status, headers: response.headers }), 503, 'service_unavailable');
  }
}

/** The ids answered 201 and the ids of the pets named `name` in the table, each sorted. */
async function createdAndStored(answers: Answered[], tables: DynamoDBDocumentClient, name: string) {
  const created = answers.filter((answer) => answer.status === 201).map(({ body }) => (JSON.parse(body) as PetBody).id);
  const stored = (await storedPets(tables)).filter((pet) => pet.name === name).map((pet) => pet.id);
  return { created: created.sort((a, b) => a - b), stored: stored.sort((a, b) => a - b) };
}

describe('the listing without sharding: one listing shard', () => {
  let unsharded: FaultyApi;
  beforeAll(async () => {
    unsharded = await startFaultyApi({
      // Through the functions' environment, as a stage would set it: no code is changed.
      functionEnvironment: routeFunctionsOnly({ [ENV.listingShards]: '1', [ENV.writeShards]: '1' }),
    });
    await warmUp(unsharded, [
      [CLIENTS, listHead(1)],
      [CLIENTS, createOne({ name: 'warm-up' })],
    ]);
  });
  afterAll(() => unsharded?.close());

  it('answers 503 beyond the partition’s write limit, and the tables hold exactly the pets answered 201', async () => {
    const { api, proxy, tables } = unsharded;
    // 10 writes a second on `pets-by-creation`'s one partition; a pet is far below 1 KB: one unit each.
    const limits: PartitionLimits = { ...DYNAMODB_PARTITION, scale: 1 / 100 };
    const perSecond = limits.writeUnitsPerSecond * limits.scale;
    const name = 'created-unsharded';
    proxy.limitPartitions(limits);
    const { answers, seconds } = await drive(() => postPet(api, newPet({ name })));
    proxy.unlimitPartitions();

    const created = answers.filter((answer) => answer.status === 201);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([201, 503]));
    // Writes are charged before they are forwarded, so the bucket's bound is exact; a few tokens may go unused.
    expect(created.length).toBeLessThanOrEqual(unitsWithin(perSecond, seconds));
    expect(created.length).toBeGreaterThanOrEqual(0.7 * unitsWithin(perSecond, seconds));
    await expectUnavailable(answers);
    const { created: createdIds, stored } = await createdAndStored(answers, tables, name);
    expect(stored).toEqual(createdIds);
    expect(proxy.partitionThrottles().find((counted) => counted.index === HEAD.index)).toMatchObject({ ...HEAD });
  });

  it('answers 503 beyond the partition’s read limit when listing the head, and writes nothing', async () => {
    const { api, proxy, tables } = unsharded;
    // 3 read units a second; a page of 10 pets (11 items read) is below 4 KB: half a unit, eventually consistent.
    const limits: PartitionLimits = { ...DYNAMODB_PARTITION, scale: 1 / 1_000 };
    const perSecond = limits.readUnitsPerSecond * limits.scale;
    const storedBefore = await storedPets(tables);
    const throttledBefore = proxy.partitionThrottles().find((counted) => counted.index === HEAD.index)?.throttled ?? 0;
    proxy.limitPartitions(limits);
    const { answers, seconds } = await drive(() => api.request('/pets?limit=10'));
    proxy.unlimitPartitions();

    const listed = answers.filter((answer) => answer.status === 200);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 503]));
    // A read is admitted before its charge is known: up to one page per client beyond the bucket's bound.
    expect(listed.length).toBeLessThanOrEqual(unitsWithin(perSecond, seconds) / UNITS_PER_QUERY + CLIENTS);
    expect(listed.length).toBeGreaterThanOrEqual(0.7 * (unitsWithin(perSecond, seconds) / UNITS_PER_QUERY));
    await expectUnavailable(answers);
    const throttled = proxy.partitionThrottles().find((counted) => counted.index === HEAD.index)?.throttled ?? 0;
    expect(throttled - throttledBefore).toBeGreaterThan(0);
    expect(await storedPets(tables)).toEqual(storedBefore);
  });
});

describe('the local stage: production’s listing shards', () => {
  let localStage: FaultyApi;
  beforeAll(async () => {
    localStage = await startFaultyApi();
    await warmUp(localStage, [
      [CLIENTS, createOne({ name: 'warm-up' })],
      [LIST_CLIENTS, listHead(1)],
    ]);
  });
  afterAll(() => localStage?.close());

  it('creates at three times one partition’s write limit without a throttle reaching a client, and the tables hold exactly the pets answered 201', async () => {
    const { api, proxy, tables } = localStage;
    // One partition takes 6⅔ writes a second (20 over the drive, its bucket included): unsharded, more
    // than half of the about 43 creates below would be refused. Ids are uniformly random, so each of the
    // shards of `pets-by-creation`, and of `pets-by-status-shard` (`available`, `available#1`, ...), gets
    // its share: at production's 4 shards, about 11 over the drive, with 20 to spare one in a few
    // thousand drives exceeds (binomial, three standard deviations). On a loaded machine the drive's
    // requests can bunch, and one shard's bucket run dry for a moment: the client's retry absorbs it.
    const limits: PartitionLimits = { ...DYNAMODB_PARTITION, scale: 1 / 150 };
    const writesPerSecond = limits.writeUnitsPerSecond * limits.scale;
    const name = 'created-sharded';
    proxy.limitPartitions(limits);
    const { answers, seconds } = await drive(() => postPet(api, newPet({ name, status: 'available' })), {
      perSecond: 3.2 * writesPerSecond,
    });
    proxy.unlimitPartitions();

    const refused = answers.filter((answer) => answer.status !== 201).map((answer) => answer.body);
    expect(refused, JSON.stringify(proxy.partitionThrottles())).toEqual([]);
    // "Several times": the rate achieved, whatever the machine's load, is at least 3 times one partition's.
    expect(answers.length / seconds).toBeGreaterThanOrEqual(3 * writesPerSecond);
    const { created, stored } = await createdAndStored(answers, tables, name);
    expect(stored).toEqual(created);
  });

  it('answers 503 to a listing drive beyond one partition’s read limit, and writes nothing: every first page reads every shard', async () => {
    const { api, proxy, tables } = localStage;
    const storedBefore = await storedPets(tables);
    proxy.limitPartitions(READ_LIMITS);
    const { answers, seconds } = await drive(() => api.request(HEAD_PAGE), { clients: LIST_CLIENTS });
    proxy.unlimitPartitions();

    const listed = answers.filter((answer) => answer.status === 200);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 503]));
    // Every shard's bucket bounds the pages as one partition's did; up to one page per client is admitted beyond it.
    expect(listed.length).toBeLessThanOrEqual(unitsWithin(readsPerSecond, seconds) / UNITS_PER_QUERY + LIST_CLIENTS);
    await expectUnavailable(answers);
    const throttledShards = proxy.partitionThrottles().filter((counted) => counted.index === allPetsIndex.name);
    expect(throttledShards.length).toBeGreaterThan(0);
    expect(await storedPets(tables)).toEqual(storedBefore);
  });
});
