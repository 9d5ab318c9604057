import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHECK_KEY_NAME, type CheckKeyStore } from '../../../functions/pre-traffic-hook/check-keys';
import { checksFor, keylessChecksFor } from '../../../functions/pre-traffic-hook/pre-traffic-expectations';
import { runPreTrafficChecks } from '../../../functions/pre-traffic-hook/pre-traffic-run';
import {
  createLocalClient,
  ensureTables,
  localDynamoDbEnvironment,
  startDynalite,
  type LocalDynamoDb,
} from '../../../local/dynamodb-local';
import type { ApiKeyRecord } from '../../../shared/domain/auth/api-key-store';
import { hashApiKey } from '../../../shared/domain/auth/api-keys';
import { createAuthenticator } from '../../../shared/domain/auth/authenticate';
import { DynamoApiKeyStore } from '../../../shared/dynamodb/dynamo-api-key-store';
import { DynamoPetStore } from '../../../shared/dynamodb/dynamo-pet-store';
import { createDocumentClient, documentClientOver, DYNAMODB_MAX_ATTEMPTS } from '../../../shared/dynamodb/dynamodb-client';
import type { HttpEvent, HttpHandler } from '../../../shared/http/handler';
import { lambdaContext } from '../../../tools/lambda/events';
import { snapshotEnv } from '../../helpers/env';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy';
import {
  DEPLOYED_NAMES,
  authorizationOf,
  authorizerOver,
  FAKE_CURRENT_VERSION,
  fakeCodeDeploy,
  fakeLambda,
  type FakeAnswer,
  type InvokeCall,
} from '../../helpers/fake-codedeploy';
import { captureOutput, type CapturedOutput } from '../../helpers/output';

// The hook's own log lines are part of what is checked here: INFO before its logger is loaded. getPet
// validates its configuration when its module loads, as on a Lambda cold start.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  process.env.PETS_TABLE_NAME = 'unit-test-pets';
});
const { createGetPetHandler } = await import('../../../functions/get-pet');

/**
 * The pre-traffic hook's check keys against the keys table as deployed (dynalite), with faults between the
 * hook's own document client and the table, at the network: whatever goes wrong, each key is revoked, or
 * expires by itself when the hook's invocation ends, or the run fails naming it, and the table says so.
 * With the store down for every version alike, the hook judges the new version against the old one.
 */

const DEPLOYMENT = 'd-KEYFAULTS';
const EVENT = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: 'hook-execution-keys' };
const AUTHORIZER = DEPLOYED_NAMES.authorizer;
const GET_PET = DEPLOYED_NAMES.getPet;
const NEW = '3';
const OLD = FAKE_CURRENT_VERSION;
/** What the hook's invocation has left when its checks begin. */
const REMAINING_MS = 90_000;

let dynamo: LocalDynamoDb;
let proxy: FaultProxy;
let direct: DynamoDBClient;
let restoreEnv: () => void;
let tableCount = 0;

beforeAll(async () => {
  dynamo = await startDynalite({ port: 0 });
  proxy = await startFaultProxy(dynamo.endpoint);
  direct = createLocalClient(dynamo.endpoint);
  restoreEnv = snapshotEnv();
  // The hook's client, and the checked versions', find the tables as on Lambda: by the environment, here through the proxy.
  Object.assign(process.env, localDynamoDbEnvironment(proxy.endpoint));
});
afterEach(async () => {
  proxy.clear();
  await proxy.acceptConnections();
});
afterAll(async () => {
  restoreEnv?.();
  direct?.destroy();
  await proxy?.close();
  await dynamo?.close();
});

/**
 * Fresh tables; the keys table's store the hook writes with and the one the versions read with (their own
 * clients, through the proxy); and the one the test reads both tables with, directly.
 */
async function tables() {
  const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
  await ensureTables(direct, names);
  const hookStore = new DynamoApiKeyStore(createDocumentClient(), names.apiKeys);
  const versionsStore = () => new DynamoApiKeyStore(createDocumentClient(), names.apiKeys);
  const tableStore = new DynamoApiKeyStore(documentClientOver(direct), names.apiKeys);
  /** Every item of the pets table, whatever its kind. */
  const pets = async () => (await direct.send(new ScanCommand({ TableName: names.pets }))).Items ?? [];
  return { names, hookStore, versionsStore, tableStore, records: () => tableStore.list(), pets };
}

/** What the hook has logged so far in the run going on. */
let hookLog: CapturedOutput | undefined;

type Answers = (call: InvokeCall) => FakeAnswer | Promise<FakeAnswer>;

/** Two versions of a function, each answering as its own: the one serving now, and the one being deployed. */
function versions(old: Answers, deployed: Answers): Answers {
  return (call) => (call.qualifier === OLD ? old(call) : deployed(call));
}

/** A version of getPet as functions/get-pet.ts is, over the pets table through the proxy; `regression` turns its answer into a broken version's. */
function getPetVersion(table: string, regression: (answer: Awaited<ReturnType<HttpHandler>>) => unknown = (answer) => answer) {
  const handler = createGetPetHandler({ store: new DynamoPetStore(createDocumentClient(), table, 1) });
  return async (call: InvokeCall): Promise<FakeAnswer> => ({
    payload: regression(await handler(call.event as HttpEvent, lambdaContext())),
  });
}

/** One run of the hook over a deployment of one function, whose versions answer as `answers` does. */
async function runHook(checkKeys: CheckKeyStore, answers: Answers, functionName = AUTHORIZER) {
  const codeDeploy = fakeCodeDeploy(DEPLOYMENT, [{ functionName, targetVersion: NEW }]);
  const lambda = fakeLambda(answers);
  const output = captureOutput({ silent: true });
  hookLog = output;
  const started = Date.now();
  const bearerTokens = () => lambda.calls.flatMap((call) => authorizationOf(call)?.split(' ')[1] ?? []);
  const status = await runPreTrafficChecks(EVENT, {
    codeDeploy: codeDeploy.api,
    lambda: lambda.api,
    functionNames: DEPLOYED_NAMES,
    trafficFunction: 'AnimalStore-Staging-deploymentTraffic-D4E5F6',
    clock: { getRemainingTimeInMillis: () => REMAINING_MS },
    checkContext: (runId) => ({ runId, unknownApiKey: 'pets_an-unknown-key-of-the-right-shape', unknownPetId: 1, now: new Date() }),
    checkKeys,
  }).finally(() => output.stop());
  const asked = (version: string) => lambda.calls.filter((call) => call.qualifier === version).length;
  return { status, started, invocations: lambda.calls.length, asked, bearerTokens, logged: output.json(), trafficStarts: lambda.queued };
}

/** The check keys the run left in the table, one of each shape. */
async function checkKeysOf(records: () => Promise<ApiKeyRecord[]>) {
  const stored = await records();
  expect(stored).toHaveLength(3);
  expect(stored.every((record) => record.name === CHECK_KEY_NAME)).toBe(true);
  const withExpiry = stored.find((record) => record.expiresAt !== undefined)!;
  const revoked = stored.find((record) => record.expiresAt === undefined && record.revokedAt === record.createdAt)!;
  const withoutExpiry = stored.find((record) => record !== withExpiry && record !== revoked)!;
  return { withExpiry, revoked, withoutExpiry };
}

const AUTHORIZER_CHECKS = checksFor('authorizer', {
  runId: 'r',
  unknownApiKey: 'k',
  unknownPetId: 1,
  now: new Date(),
  checkKeys: { withExpiry: { apiKey: 'k', keyId: 'i' }, withoutExpiry: { apiKey: 'k', keyId: 'i' }, revoked: { apiKey: 'k', keyId: 'i' } },
});
const KEYLESS_CHECKS = keylessChecksFor('authorizer', { runId: 'r', unknownApiKey: 'k', unknownPetId: 1, now: new Date() });

describe("the pre-traffic hook's check keys", () => {
  it('are each logged by id before they are written; the one with an expiry expires when the hook’s invocation ends; each is revoked after the checks', async () => {
    const { hookStore, tableStore, records } = await tables();
    // The hook's log as it stood when each write left.
    const loggedBeforeWrite = new Map<string, Array<Record<string, unknown>>>();
    const watched: CheckKeyStore = {
      add: (record) => {
        loggedBeforeWrite.set(
          record.keyId,
          hookLog!.json().filter((line) => line.message === 'Issuing a check key' && line.keyId === record.keyId),
        );
        return hookStore.add(record);
      },
      revokeByHash: (keyHash, at) => hookStore.revokeByHash(keyHash, at),
    };
    const { status, started, logged, bearerTokens } = await runHook(watched, authorizerOver(tableStore));
    expect(status).toBe('Succeeded');
    const keys = await checkKeysOf(records);
    for (const key of Object.values(keys)) {
      expect(key.revokedAt, key.keyId).toBeDefined();
      expect(loggedBeforeWrite.get(key.keyId), key.keyId).toEqual([expect.objectContaining({ keyId: key.keyId })]);
    }
    const expiresAt = Date.parse(keys.withExpiry.expiresAt!);
    expect(expiresAt - started).toBeGreaterThanOrEqual(REMAINING_MS - 1_000);
    expect(expiresAt - started).toBeLessThanOrEqual(REMAINING_MS + 1_000);
    expect(loggedBeforeWrite.get(keys.withExpiry.keyId)).toEqual([expect.objectContaining({ expiresAt: keys.withExpiry.expiresAt })]);
    // No key is ever logged: the authorizer's events are the one place they appear.
    const apiKeys = bearerTokens().filter((token) => Object.values(keys).some((key) => hashApiKey(token) === key.keyHash));
    expect(apiKeys).toHaveLength(3);
    for (const apiKey of apiKeys) expect(JSON.stringify(logged)).not.toContain(apiKey);
  });

  it('run every check and are revoked when the answer to a write is lost and the SDK’s retry meets the write itself', async () => {
    const { hookStore, tableStore, records } = await tables();
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', times: 1 });
    const { status, invocations } = await runHook(hookStore, authorizerOver(tableStore));
    expect(status).toBe('Succeeded');
    expect(invocations).toBe(AUTHORIZER_CHECKS.length);
    const keys = await checkKeysOf(records);
    expect(Object.values(keys).every((key) => key.revokedAt !== undefined)).toBe(true);
  });

  it('are not all written when a write seemed to fail, every answer lost: the one that landed is revoked, and only the checks that need no key run', async () => {
    const { hookStore, tableStore, records } = await tables();
    proxy.inject({ fault: 'lose-response', operation: 'PutItem' });
    const { status, invocations, logged } = await runHook(hookStore, authorizerOver(tableStore));
    // The keys table did not take the write: no version is at fault.
    expect(status).toBe('Succeeded');
    expect(invocations).toBe(KEYLESS_CHECKS.length);
    // The first key landed though its write seemed to fail; none was written after it.
    const stored = await records();
    expect(stored).toEqual([
      expect.objectContaining({ name: CHECK_KEY_NAME, expiresAt: expect.any(String), revokedAt: expect.any(String) }),
    ]);
    expect(logged).toContainEqual(expect.objectContaining({ level: 'ERROR', message: 'The checks that need a key did not run' }));
  });

  it('expire by itself at the hook’s end, or fail the run naming the one without an expiry, when every revocation is throttled', async () => {
    const { hookStore, tableStore, records } = await tables();
    proxy.inject({ fault: 'throttle', operation: 'UpdateItem' });
    const { status, started, bearerTokens, logged } = await runHook(hookStore, authorizerOver(tableStore));
    expect(status).toBe('Failed');
    const keys = await checkKeysOf(records);
    expect([keys.withExpiry.revokedAt, keys.withoutExpiry.revokedAt]).toEqual([undefined, undefined]);
    const expiresAt = Date.parse(keys.withExpiry.expiresAt!);
    expect(expiresAt).toBeLessThanOrEqual(started + REMAINING_MS + 1_000);
    // The keys the checks used, as the authorizer's events carried them: the one place they appear.
    const apiKeyOf = (record: ApiKeyRecord) => bearerTokens().find((token) => hashApiKey(token) === record.keyHash);
    const verdictAt = (now: number, record: ApiKeyRecord) =>
      createAuthenticator(tableStore, { now: () => now })(`Bearer ${apiKeyOf(record)}`);
    expect(await verdictAt(expiresAt - 1, keys.withExpiry)).toEqual({ outcome: 'allowed', keyId: keys.withExpiry.keyId });
    expect(await verdictAt(expiresAt, keys.withExpiry)).toEqual({ outcome: 'invalid' });
    expect(await verdictAt(expiresAt, keys.revoked)).toEqual({ outcome: 'invalid' });
    // The key without an expiry still works: the run says so, by its id, for an operator to revoke it.
    expect(await verdictAt(expiresAt, keys.withoutExpiry)).toEqual({ outcome: 'allowed', keyId: keys.withoutExpiry.keyId });
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        check: 'revokes its check key',
        detail: expect.stringMatching(new RegExp(`^${keys.withoutExpiry.keyId} has no expiry and may still work: revoke it now`)),
      }),
    );
  });

  it('fail the run when the one without an expiry alone cannot be revoked, which is revoked first, and the others are revoked', async () => {
    const { hookStore, tableStore, records } = await tables();
    // Every attempt of the first revocation, none of the next.
    proxy.inject({ fault: 'throttle', operation: 'UpdateItem', times: DYNAMODB_MAX_ATTEMPTS });
    const { status, logged } = await runHook(hookStore, authorizerOver(tableStore));
    expect(status).toBe('Failed');
    const keys = await checkKeysOf(records);
    expect(keys.withoutExpiry.revokedAt).toBeUndefined();
    expect(keys.withExpiry.revokedAt).toBeDefined();
    const failed = logged.filter((line) => line.level === 'ERROR' && line.check === 'revokes its check key');
    expect(failed).toEqual([expect.objectContaining({ detail: expect.stringContaining(`${keys.withoutExpiry.keyId} has no expiry`) })]);
  });

  it('are never stored when the keys table throttles every write: only the checks that need no key run, and the run is not failed for it', async () => {
    const { hookStore, tableStore, records } = await tables();
    proxy.inject({ fault: 'throttle', operation: 'PutItem' });
    const { status, invocations, logged } = await runHook(hookStore, authorizerOver(tableStore));
    expect(status).toBe('Succeeded');
    expect(invocations).toBe(KEYLESS_CHECKS.length);
    expect(await records()).toEqual([]);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'The checks that need a key did not run',
        detail: expect.stringContaining('ProvisionedThroughputExceededException'),
      }),
    );
  });
});

describe('the pre-traffic hook while the store is down for every version (connections refused)', () => {
  it('lets a new authorizer through that answers as the old one does, excusing what fails the same way on both, and leaves no key', async () => {
    const { hookStore, versionsStore, records } = await tables();
    await proxy.refuseConnections();
    const { status, asked, logged, trafficStarts } = await runHook(
      hookStore,
      versions(authorizerOver(versionsStore()), authorizerOver(versionsStore())),
    );
    expect(status).toBe('Succeeded');
    // The unknown key's lookup fails on both (`unavailable`); a request without a key needs no lookup.
    expect([asked(NEW), asked(OLD)]).toEqual([KEYLESS_CHECKS.length, 1]);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: 'Check excused',
        check: KEYLESS_CHECKS[0]!.name,
        detail: `the verdict was unavailable, expected invalid: fails the same way on version ${OLD}`,
      }),
    );
    expect(logged).toContainEqual(expect.objectContaining({ level: 'ERROR', message: 'The checks that need a key did not run' }));
    expect(trafficStarts).toHaveLength(1);
    await proxy.acceptConnections();
    expect(await records()).toEqual([]);
  });

  it('fails a new authorizer that crashes where the old one answers, and leaves no key', async () => {
    const { hookStore, versionsStore, records } = await tables();
    await proxy.refuseConnections();
    const crashed: Answers = () => ({ functionError: 'Unhandled', payload: { errorType: 'TypeError', errorMessage: 'x is undefined' } });
    const { status, trafficStarts } = await runHook(hookStore, versions(authorizerOver(versionsStore()), crashed));
    expect(status).toBe('Failed');
    expect(trafficStarts).toEqual([]);
    await proxy.acceptConnections();
    expect(await records()).toEqual([]);
  });

  it('lets a new getPet through that answers 503 as the old one does, and the tables hold nothing', async () => {
    const { names, hookStore, records, pets } = await tables();
    await proxy.refuseConnections();
    const { status, asked, logged } = await runHook(hookStore, versions(getPetVersion(names.pets), getPetVersion(names.pets)), GET_PET);
    expect(status).toBe('Succeeded');
    expect(asked(OLD)).toBe(1);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: 'Check excused',
        detail: `answered 503 service_unavailable, expected 404: fails the same way on version ${OLD}`,
      }),
    );
    await proxy.acceptConnections();
    expect(await records()).toEqual([]);
    expect(await pets()).toEqual([]);
  });
});

describe('the pre-traffic hook with the store up', () => {
  it('fails a new getPet that answers 500 where the old one answers 404', async () => {
    const { names, hookStore, records, pets } = await tables();
    const internalError = (answer: Awaited<ReturnType<HttpHandler>>) =>
      answer.statusCode === 404
        ? { ...answer, statusCode: 500, body: JSON.stringify({ code: 'internal_error', message: 'x', status: 500 }) }
        : answer;
    const { status, logged, trafficStarts } = await runHook(
      hookStore,
      versions(getPetVersion(names.pets), getPetVersion(names.pets, internalError)),
      GET_PET,
    );
    expect(status).toBe('Failed');
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'ERROR', detail: `answered 500 internal_error, expected 404 (passes on version ${OLD})` }),
    );
    expect(trafficStarts).toEqual([]);
    expect(await records()).toEqual([]);
    expect(await pets()).toEqual([]);
  });
});
