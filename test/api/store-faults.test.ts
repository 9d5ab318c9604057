import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_TIMEOUT_MS } from '../../shared/facts/time-budget';
import { DYNAMODB_MAX_ATTEMPTS, dynamoDbCallBudgetMs } from '../../shared/dynamodb/dynamodb-client';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { OPERATION_IDS } from '../../shared/facts/routes';
import type { FaultProxy } from '../helpers/fault-proxy';
import { expectError, expectRetryAfter, timed } from '../helpers/http';
import { startFaultyApi, type FaultyApi, type TestApi } from '../helpers/local-api';
import {
  callsPerRequest,
  expectFailingStoreAnswer,
  expectLeft,
  expectStatedBodyValid,
  faultOnCall,
  sendStated,
  statedCalls,
  statementOf,
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
 * Faults between the functions and DynamoDB, injected at the network: the local API is started on a
 * fault-injecting proxy in front of dynalite (DYNAMODB_ENDPOINT, as a developer can), and every test
 * reads what the tables hold afterwards straight from dynalite, behind the proxy's back. Every operation
 * is held to what its catalog entry states under each fault (test/helpers/operations-under-faults.ts);
 * createPet's Idempotency-Key and the authorizer's key lookup have tests of their own beside them.
 */
let faulty: FaultyApi;
let proxy: FaultProxy;
let api: TestApi;
let tables: DynamoDBDocumentClient;

beforeAll(async () => {
  faulty = await startFaultyApi();
  ({ proxy, api, tables } = faulty);
  // Cold-starts the authorizer and caches the key's verdict while the store works, so that faults
  // aimed at the pets table meet the create function, not the key lookup.
  expect((await api.request('/pets?limit=1')).status).toBe(200);
});
afterEach(async () => {
  proxy.clear();
  await proxy.acceptConnections();
});
afterAll(async () => {
  await faulty?.close();
});

const PETS = { table: LOCAL_TABLES.pets };
const IDEMPOTENCY = { table: LOCAL_TABLES.idempotency };

describe('every operation', () => {
  it.each(OPERATION_IDS)(
    '%s states how it answers a lost answer and a failing store, with a request that makes the call it names',
    async (operationId) => {
      expectStatedBodyValid(operationId);
      await callsPerRequest(api, proxy, operationId);
    },
  );
});

describe('when the answer to an operation’s store call is lost after the store did it', () => {
  it.each(OPERATION_IDS)(
    'answers %s as it states and leaves what it states: the SDK retried, and found its own earlier work',
    async (operationId) => {
      const calls = await callsPerRequest(api, proxy, operationId);
      const pet = await storePet(api);
      const before = await tablesNow(tables);
      proxy.inject(faultOnCall(operationId, 'lose-response', { times: 1 }));
      const from = proxy.requests.length;
      const response = await sendStated(api, operationId, pet);
      expect(response.status).toBe(statementOf(operationId).lostAnswer);
      await expectLeft(operationId, before, tables, response);
      expect(statedCalls(proxy, operationId, from, 'lose-response')).toBe(1);
      expect(statedCalls(proxy, operationId, from)).toBe(calls + 1);
    },
  );

  it.each(OPERATION_IDS)(
    'answers %s as it states for a failing store when every answer is lost, and leaves what it states all the same',
    async (operationId) => {
      const pet = await storePet(api);
      const before = await tablesNow(tables);
      proxy.inject(faultOnCall(operationId, 'lose-response'));
      const from = proxy.requests.length;
      await expectFailingStoreAnswer(operationId, await sendStated(api, operationId, pet));
      // The call reached the store before its answer was lost: see docs/contract-decisions.md, Failures.
      await expectLeft(operationId, before, tables);
      expect(statedCalls(proxy, operationId, from, 'lose-response')).toBeGreaterThanOrEqual(DYNAMODB_MAX_ATTEMPTS);
    },
  );
});

describe('when the answer to a pet write is lost after the write', () => {
  it('answers 201, not 409, when the answers to both the key claim and the pet write are lost', async () => {
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', ...IDEMPOTENCY, times: 1 });
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', ...PETS, times: 1 });
    const body = newPet();
    const recordsBefore = (await idempotencyRecords(tables)).length;
    const response = await postPetWithKey(api, body, randomUUID());
    expect(response.status).toBe(201);
    const pet = (await response.json()) as PetBody;
    expect(await petsNamed(tables, body.name)).toEqual([expect.objectContaining({ id: pet.id })]);
    const records = await idempotencyRecords(tables);
    expect(records).toHaveLength(recordsBefore + 1);
    expect(records.filter((record) => record.status === 'INPROGRESS')).toEqual([]);
  });

  it('keeps every 201 to exactly one pet, and no pet that no 201 announced, with 1 in 10 write answers lost', async () => {
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', ...PETS, every: 10 });
    const prefix = `steady-loss-${randomUUID()}`;
    const created: number[] = [];
    // One client at a time, so a lost answer's retry is the next write and is answered. Concurrent
    // clients could land all three attempts of one create on lost answers: a 503, as designed.
    for (let index = 0; index < 60; index++) {
      const response = await postPet(api, newPet({ name: `${prefix} ${index}` }));
      expect(response.status).toBe(201);
      created.push(((await response.json()) as PetBody).id);
    }
    const stored = (await storedPets(tables)).filter((pet) => pet.name.startsWith(prefix));
    expect(stored.map((pet) => pet.id).sort()).toEqual([...created].sort());
    expect(proxy.requests.filter((request) => request.fault === 'lose-response').length).toBeGreaterThanOrEqual(6);
  });

  it('settles a 503 whose write landed to exactly one pet when the client retries with the same key', async () => {
    // Every attempt's answer lost: the first wrote the pet, the SDK gives up, the client gets 503.
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', ...PETS, times: 3 });
    const body = newPet();
    const key = randomUUID();
    const first = await postPetWithKey(api, body, key);
    expectRetryAfter(first);
    await expectError(first, 503, 'service_unavailable');
    const [written] = await petsNamed(tables, body.name);
    expect(written).toBeDefined();

    const retry = await createUntilDone(api, body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retry.json()) as PetBody).id).toBe(written!.id);
    expect(await petsNamed(tables, body.name)).toHaveLength(1);
  });

  it('settles a 503 after the pet was written but its record could not be completed: 409 while the key is held, then the pet', async () => {
    // The record's completion never reaches DynamoDB: the pet exists, the record stays in progress.
    proxy.inject({ fault: 'drop-request', operation: 'UpdateItem', ...IDEMPOTENCY, times: 3 });
    const body = newPet();
    const key = randomUUID();
    await expectError(await postPetWithKey(api, body, key), 503, 'service_unavailable');
    expect(await petsNamed(tables, body.name)).toHaveLength(1);

    const held = await postPetWithKey(api, body, key);
    expectRetryAfter(held);
    await expectError(held, 409, 'idempotency_key_in_use');

    const settled = await createUntilDone(api, body, key);
    expect(settled.status).toBe(201);
    expect(await petsNamed(tables, body.name)).toHaveLength(1);
    expect(((await settled.json()) as PetBody).id).toBe((await petsNamed(tables, body.name))[0]!.id);
  });
});

describe('when DynamoDB refuses connections', () => {
  it.each(OPERATION_IDS)('answers %s as it states for a failing store, at once, and stores nothing', async (operationId) => {
    const pet = await storePet(api);
    const before = await tablesNow(tables);
    await proxy.refuseConnections();
    const { response, ms } = await timed(() => sendStated(api, operationId, pet));
    await expectFailingStoreAnswer(operationId, response);
    expect(ms).toBeLessThan(dynamoDbCallBudgetMs());
    expect(await tablesNow(tables)).toEqual(before);
  });

  it('answers a keyed createPet 503 with Retry-After at once, stores nothing, and creates the pet once the store is back', async () => {
    const body = newPet();
    const key = randomUUID();
    const recordsBefore = await idempotencyRecords(tables);
    await proxy.refuseConnections();
    const { response, ms } = await timed(() => postPetWithKey(api, body, key));
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
    expect(ms).toBeLessThan(dynamoDbCallBudgetMs());
    expect(await petsNamed(tables, body.name)).toEqual([]);
    expect(await idempotencyRecords(tables)).toEqual(recordsBefore);

    await proxy.acceptConnections();
    const retry = await createUntilDone(api, body, key);
    expect(retry.status).toBe(201);
    expect(await petsNamed(tables, body.name)).toHaveLength(1);
  });
});

describe('when DynamoDB accepts a request and never answers', () => {
  it.each(OPERATION_IDS)(
    'answers %s as it states for a failing store within the function timeout, each attempt cut, and stores nothing',
    async (operationId) => {
      const calls = await callsPerRequest(api, proxy, operationId);
      const pet = await storePet(api);
      const before = await tablesNow(tables);
      proxy.inject(faultOnCall(operationId, 'stall'));
      const from = proxy.requests.length;
      const { response, ms } = await timed(() => sendStated(api, operationId, pet));
      await expectFailingStoreAnswer(operationId, response);
      expect(ms).toBeLessThan(FUNCTION_TIMEOUT_MS);
      expect(statedCalls(proxy, operationId, from, 'stall')).toBe(DYNAMODB_MAX_ATTEMPTS * calls);
      expect(await tablesNow(tables)).toEqual(before);
    },
  );

  it('answers a keyed createPet 503 with Retry-After in time, stores nothing, and creates the pet once the store answers', async () => {
    proxy.inject({ fault: 'stall', operation: 'PutItem', ...PETS });
    const body = newPet();
    const key = randomUUID();
    const { response, ms } = await timed(() => postPetWithKey(api, body, key));
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
    expect(ms).toBeLessThan(FUNCTION_TIMEOUT_MS);
    expect(await petsNamed(tables, body.name)).toEqual([]);

    proxy.clear();
    const retry = await createUntilDone(api, body, key);
    expect(retry.status).toBe(201);
    expect(await petsNamed(tables, body.name)).toHaveLength(1);
  });

  it("answers our 503, not API Gateway's 500, when the authorizer's key lookup stalls", async () => {
    const fresh = await issueApiKey(apiKeyStore(tables), `stalled lookup ${randomUUID()}`);
    proxy.inject({ fault: 'stall', operation: 'GetItem', table: LOCAL_TABLES.apiKeys });
    const { response, ms } = await timed(() => api.request('/pets', { headers: { authorization: `Bearer ${fresh.apiKey}` } }));
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
    expect(ms).toBeLessThan(FUNCTION_TIMEOUT_MS);
  });
});

describe('when DynamoDB throttles', () => {
  it.each(OPERATION_IDS)(
    'answers %s as it states for a failing store once every attempt of a call is throttled, and stores nothing',
    async (operationId) => {
      const pet = await storePet(api);
      const before = await tablesNow(tables);
      proxy.inject(faultOnCall(operationId, 'throttle'));
      const from = proxy.requests.length;
      await expectFailingStoreAnswer(operationId, await sendStated(api, operationId, pet));
      // A throttled answer comes at once, so a listing's other shard queries may be cut short with the page.
      expect(statedCalls(proxy, operationId, from, 'throttle')).toBeGreaterThanOrEqual(DYNAMODB_MAX_ATTEMPTS);
      expect(await tablesNow(tables)).toEqual(before);
    },
  );

  it('answers a keyed createPet 503 with Retry-After, stores nothing, and lets the retry through once it stops', async () => {
    proxy.inject({ fault: 'throttle', operation: 'PutItem', ...PETS });
    const body = newPet();
    const key = randomUUID();
    const response = await postPetWithKey(api, body, key);
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
    expect(await petsNamed(tables, body.name)).toEqual([]);
    expect(proxy.requests.filter((request) => request.fault === 'throttle').length).toBeGreaterThanOrEqual(3);

    proxy.clear();
    const retry = await createUntilDone(api, body, key);
    expect(retry.status).toBe(201);
    expect(await petsNamed(tables, body.name)).toHaveLength(1);
  });
});
