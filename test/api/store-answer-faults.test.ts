import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { DYNAMODB_MAX_ATTEMPTS, dynamoDbCallBudgetMs } from '../../shared/dynamodb/dynamodb-client';
import { OPERATION_IDS } from '../../shared/facts/routes';
import { FUNCTION_TIMEOUT_MS } from '../../shared/facts/time-budget';
import type { Fault, FaultProxy } from '../helpers/fault-proxy';
import { expectError, expectRetryAfter, timed } from '../helpers/http';
import { startFaultyApi, type FaultyApi, type TestApi } from '../helpers/local-api';
import {
  callsPerRequest,
  expectFailingStoreAnswer,
  expectLeft,
  faultOnCall,
  sendStated,
  storePet,
  tablesNow,
} from '../helpers/operations-under-faults';
import {
  apiKeyStore,
  createUntilDone,
  idempotencyRecords,
  newPet,
  petsNamed,
  postPet,
  postPetWithKey,
  storedPets,
  type PetBody,
} from '../helpers/pets';

/**
 * DynamoDB's answer broken after the request reached it: the head arrives and the body never does,
 * the body drips a byte at a time, or a 200 carries a body that is not JSON. Injected at the network
 * by the fault proxy in front of dynalite; every answer is our 503 with Retry-After, in far less time
 * than the function timeout, and every test reads what the tables hold afterwards behind the proxy's back.
 * Every operation is held to what its catalog entry states (test/helpers/operations-under-faults.ts);
 * createPet's Idempotency-Key and the authorizer's key lookup have tests of their own beside them.
 * Each kind of broken answer has a local API and proxy of its own, so a test meets all three at once:
 * their waits are the store's time budget, not work.
 */

/** The faults on an answer that leave the SDK waiting: each attempt must be cut, then retried. */
const WAITING_FAULTS: readonly Fault[] = ['stall-body', 'drip-body'];
const ANSWER_FAULTS: readonly Fault[] = [...WAITING_FAULTS, 'non-json-body'];

/**
 * Well within the function timeout, and what the design promises: one call's own budget (every
 * attempt cut at the attempt timeout, the backoff between them), plus room for a busy machine.
 */
const ANSWERED_WITHIN_MS = dynamoDbCallBudgetMs() + 2_000;

/** One kind of broken answer's world: its API, the proxy in front of its dynalite, and the tables behind it. */
interface Broken {
  readonly fault: Fault;
  readonly faulty: FaultyApi;
  readonly proxy: FaultProxy;
  readonly api: TestApi;
  readonly tables: DynamoDBDocumentClient;
}

let worlds: Broken[] = [];

beforeAll(async () => {
  worlds = await Promise.all(
    ANSWER_FAULTS.map(async (fault) => {
      const faulty = await startFaultyApi();
      const { proxy, api, tables } = faulty;
      // Cold-starts the functions and caches the dev key's verdict while the store works, so the time
      // measured below is the fault's, and faults on the pets table meet the route, not the key lookup.
      for (const operationId of OPERATION_IDS) await callsPerRequest(api, proxy, operationId);
      return { fault, faulty, proxy, api, tables };
    }),
  );
});
afterEach(() => {
  for (const { proxy } of worlds) proxy.clear();
});
afterAll(async () => {
  await Promise.all(worlds.map(({ faulty }) => faulty.close()));
});

/** Runs `check` under every kind of broken answer at once; a failure names its fault. */
async function underEachFault(check: (world: Broken) => Promise<void>): Promise<void> {
  const outcomes = await Promise.allSettled(worlds.map((world) => check(world)));
  const failures = outcomes.flatMap((outcome, index) =>
    outcome.status === 'rejected' ? [`${worlds[index]!.fault}: ${(outcome.reason as Error).message}`] : [],
  );
  if (failures.length > 0) throw new Error(failures.join('\n\n'));
}

/**
 * The answer to `send`, in time. A waiting fault was met by every attempt of each of the request's `calls`
 * DynamoDB calls (a listing page queries every listing shard at once), each cut at the attempt timeout
 * rather than all of them at the invocation's deadline; an answer that is not JSON fails at once.
 */
async function answeredInTime({ fault, proxy }: Broken, send: () => Promise<Response>, calls: number): Promise<Response> {
  const from = proxy.requests.length;
  const { response, ms } = await timed(send);
  const broken = proxy.requests.slice(from).filter((request) => request.fault === fault).length;
  expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
  expect(ANSWERED_WITHIN_MS).toBeLessThan(FUNCTION_TIMEOUT_MS);
  if (WAITING_FAULTS.includes(fault)) expect(broken).toBe(DYNAMODB_MAX_ATTEMPTS * calls);
  else expect(broken).toBeGreaterThanOrEqual(1);
  return response;
}

/** Our 503 with Retry-After, in time, to a request of one DynamoDB call. */
async function expectUnavailableInTime(world: Broken, send: () => Promise<Response>): Promise<void> {
  const response = await answeredInTime(world, send, 1);
  expectRetryAfter(response);
  await expectError(response, 503, 'service_unavailable');
}

describe(`when DynamoDB’s answer is broken (${ANSWER_FAULTS.join(', ')})`, () => {
  it.each(OPERATION_IDS)(
    'answers %s as it states for a failing store, in time, and leaves what it states: its call reached the store',
    (operationId) =>
      underEachFault(async (world) => {
        const { fault, proxy, api, tables } = world;
        const calls = await callsPerRequest(api, proxy, operationId);
        const pet = await storePet(api);
        const before = await tablesNow(tables);
        proxy.inject(faultOnCall(operationId, fault));
        await expectFailingStoreAnswer(operationId, await answeredInTime(world, () => sendStated(api, operationId, pet), calls));
        // The call reached DynamoDB before its answer broke: see docs/contract-decisions.md, Failures.
        await expectLeft(operationId, before, tables);
      }),
  );

  it('answers a keyed createPet 503 with Retry-After in time, and a retry with the same key settles to exactly that one pet', () =>
    underEachFault(async (world) => {
      const { fault, proxy, api, tables } = world;
      const body = newPet();
      const key = randomUUID();
      const recordsBefore = (await idempotencyRecords(tables)).length;
      proxy.inject({ fault, operation: 'PutItem', table: LOCAL_TABLES.pets });
      await expectUnavailableInTime(world, () => postPetWithKey(api, body, key));
      const [written] = await petsNamed(world.tables, body.name);
      expect(written).toBeDefined();

      proxy.clear();
      const retry = await createUntilDone(world.api, body, key);
      expect(retry.status).toBe(201);
      expect(((await retry.json()) as PetBody).id).toBe(written!.id);
      expect(await petsNamed(world.tables, body.name)).toHaveLength(1);
      const records = await idempotencyRecords(tables);
      expect(records).toHaveLength(recordsBefore + 1);
      expect(records.filter((record) => record.status === 'INPROGRESS')).toEqual([]);
    }));

  it('answers 503 with Retry-After in time, not 401, when the authorizer’s key lookup meets it; the key works once the store does', () =>
    underEachFault(async (world) => {
      const { fault, proxy, api, tables } = world;
      const fresh = await issueApiKey(apiKeyStore(tables), `broken lookup ${randomUUID()}`);
      const authorization = `Bearer ${fresh.apiKey}`;
      const petsBefore = await storedPets(tables);
      proxy.inject({ fault, operation: 'GetItem', table: LOCAL_TABLES.apiKeys });
      await expectUnavailableInTime(world, () => api.request('/pets', { headers: { authorization } }));
      await expectUnavailableInTime(world, () => postPet(api, newPet(), { 'content-type': 'application/json', authorization }));
      expect(await storedPets(tables)).toEqual(petsBefore);

      proxy.clear();
      // The outage was not cached as a verdict: the same key is looked up again, and accepted.
      expect((await api.request('/pets?limit=1', { headers: { authorization } })).status).toBe(200);
    }));
});
