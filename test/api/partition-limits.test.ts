import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { PETS_TABLE } from '../../src/dynamodb/pets-table';
import type { FaultProxy, PartitionLimits } from '../helpers/fault-proxy';
import { expectError } from '../helpers/http';
import { startFaultyApi, type FaultyApi, type TestApi } from '../helpers/local-api';
import { newPet, postPet, storedPets, type PetBody } from '../helpers/pets';

/**
 * Today's design against DynamoDB's per-partition limits, emulated by the fault proxy and scaled down
 * so the local API can exceed them: every pet is written to one `pets-by-creation` partition, and every
 * unfiltered listing reads the head of that same partition (docs/data-model.md, issue 23). Clients see
 * 503 service_unavailable once the partition's bucket is spent, at the rate the bucket predicts.
 */
let faulty: FaultyApi;
let proxy: FaultProxy;
let api: TestApi;
let tables: DynamoDBDocumentClient;

/** Clients sending at once, each as soon as its previous request was answered. */
const CLIENTS = 8;
const { allPetsIndex } = PETS_TABLE;
const HEAD = { table: LOCAL_TABLES.pets, index: allPetsIndex.name, value: PETS_TABLE.collection };

beforeAll(async () => {
  faulty = await startFaultyApi();
  ({ proxy, api, tables } = faulty);
  // Cold-starts as many instances of each function as there will be clients, unlimited, so the
  // limits meet warm functions; the authorizer caches the key's verdict meanwhile.
  await Promise.all(Array.from({ length: CLIENTS }, () => api.request('/pets?limit=1').then((response) => response.arrayBuffer())));
  await Promise.all(
    Array.from({ length: CLIENTS }, () => postPet(api, newPet({ name: 'warm-up' })).then((response) => response.arrayBuffer())),
  );
});
afterAll(async () => {
  proxy?.unlimitPartitions();
  await faulty?.close();
});

interface Answered {
  readonly status: number;
  /** The answer, its body already read (kept in `body`), so the client's connection is reused at once. */
  readonly response: Response;
  readonly body: string;
}

/** `CLIENTS` clients send `request` back to back for `seconds`; every answer, and how long it took. */
async function drive(seconds: number, request: () => Promise<Response>): Promise<{ answers: Answered[]; seconds: number }> {
  const answers: Answered[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
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

async function expectUnavailable(answers: Answered[]): Promise<void> {
  for (const { response, body } of answers.filter((answer) => answer.status === 503)) {
    await expectError(new Response(body, { status: response.status, headers: response.headers }), 503, 'service_unavailable');
  }
}

describe('creating pets faster than one index partition takes', () => {
  it('answers 503 beyond the partition’s write limit, and the tables hold exactly the pets answered 201', async () => {
    // 10 writes a second on `pets-by-creation`'s one partition; a pet is far below 1 KB: one unit each.
    const limits: PartitionLimits = { writeUnitsPerSecond: 1_000, readUnitsPerSecond: 3_000, scale: 1 / 100 };
    const perSecond = limits.writeUnitsPerSecond * limits.scale;
    const name = 'created-under-limit';
    proxy.limitPartitions(limits);
    const { answers, seconds } = await drive(2, () => postPet(api, newPet({ name })));
    proxy.unlimitPartitions();

    const created = answers.filter((answer) => answer.status === 201);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([201, 503]));
    // Writes are charged before they are forwarded, so the bucket's bound is exact; a few tokens may go unused.
    expect(created.length).toBeLessThanOrEqual(unitsWithin(perSecond, seconds));
    expect(created.length).toBeGreaterThanOrEqual(0.7 * unitsWithin(perSecond, seconds));
    await expectUnavailable(answers);
    const createdIds = created.map(({ body }) => (JSON.parse(body) as PetBody).id);
    const storedIds = (await storedPets(tables)).filter((pet) => pet.name === name).map((pet) => pet.id);
    expect(storedIds.sort((a, b) => a - b)).toEqual(createdIds.sort((a, b) => a - b));
    expect(proxy.partitionThrottles().find((counted) => counted.index === HEAD.index)).toMatchObject({ ...HEAD });
  });
});

describe('listing the head faster than its partition’s read limit', () => {
  it('answers 503 beyond the partition’s read limit, and writes nothing', async () => {
    // 3 read units a second; a page of 10 pets (11 items read) is below 4 KB: half a unit, eventually consistent.
    const limits: PartitionLimits = { writeUnitsPerSecond: 1_000, readUnitsPerSecond: 3_000, scale: 1 / 1_000 };
    const perSecond = limits.readUnitsPerSecond * limits.scale;
    const unitsPerPage = 0.5;
    const storedBefore = await storedPets(tables);
    const throttledBefore = proxy.partitionThrottles().find((counted) => counted.index === HEAD.index)?.throttled ?? 0;
    proxy.limitPartitions(limits);
    const { answers, seconds } = await drive(2, () => api.request('/pets?limit=10'));
    proxy.unlimitPartitions();

    const listed = answers.filter((answer) => answer.status === 200);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 503]));
    // A read is admitted before its charge is known: up to one page per client beyond the bucket's bound.
    expect(listed.length).toBeLessThanOrEqual(unitsWithin(perSecond, seconds) / unitsPerPage + CLIENTS);
    expect(listed.length).toBeGreaterThanOrEqual(0.7 * (unitsWithin(perSecond, seconds) / unitsPerPage));
    await expectUnavailable(answers);
    const throttled = proxy.partitionThrottles().find((counted) => counted.index === HEAD.index)?.throttled ?? 0;
    expect(throttled - throttledBefore).toBeGreaterThan(0);
    expect(await storedPets(tables)).toEqual(storedBefore);
  });
});
