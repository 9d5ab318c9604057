import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checksFor } from '../../../functions/pre-traffic-hook/pre-traffic-expectations';
import { CHECK_KEY_NAME, runPreTrafficChecks, type CheckKeyStore } from '../../../functions/pre-traffic-hook/pre-traffic-run';
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
import { createDocumentClient, documentClientOver } from '../../../shared/dynamodb/dynamodb-client';
import { snapshotEnv } from '../../helpers/env';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy';
import { authorizationOf, authorizerOver, fakeCodeDeploy, fakeLambda } from '../../helpers/fake-codedeploy';
import { captureOutput, type CapturedOutput } from '../../helpers/output';

// The hook's own log lines are part of what is checked here: INFO before its logger is loaded.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
});

/**
 * The pre-traffic hook's check key against the keys table as deployed (dynalite), with faults between the
 * hook's own document client and the table, at the network: whatever goes wrong, the key is revoked or
 * expires by itself when the hook's invocation ends, and the table says so.
 */

const DEPLOYMENT = 'd-KEYFAULTS';
const EVENT = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: 'hook-execution-keys' };
const AUTHORIZER = 'AnimalStore-Staging-authorizer-A1B2C3';
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
  // The hook's client finds the table as on Lambda: by the environment, here through the proxy.
  Object.assign(process.env, localDynamoDbEnvironment(proxy.endpoint));
});
afterEach(() => proxy.clear());
afterAll(async () => {
  restoreEnv?.();
  direct?.destroy();
  await proxy?.close();
  await dynamo?.close();
});

/** A fresh keys table, the store the hook writes it with (its own client), and the one the test reads it with. */
async function keysTable() {
  const names = { pets: `pets-${++tableCount}`, apiKeys: `keys-${tableCount}`, idempotency: `idempotency-${tableCount}` };
  await ensureTables(direct, names);
  const hookStore = new DynamoApiKeyStore(createDocumentClient(), names.apiKeys);
  const tableStore = new DynamoApiKeyStore(documentClientOver(direct), names.apiKeys);
  return { hookStore, tableStore, records: () => tableStore.list() };
}

/** What the hook has logged so far in the run going on. */
let hookLog: CapturedOutput | undefined;

/** One run of the hook over a deployment of the authorizer, whose new version reads the real table. */
async function runHook(checkKeys: CheckKeyStore, tableStore: DynamoApiKeyStore) {
  const codeDeploy = fakeCodeDeploy(DEPLOYMENT, [{ functionName: AUTHORIZER, targetVersion: '3' }]);
  const lambda = fakeLambda(authorizerOver(tableStore));
  const output = captureOutput({ silent: true });
  hookLog = output;
  const started = Date.now();
  const bearerTokens = () => lambda.calls.flatMap((call) => authorizationOf(call)?.split(' ')[1] ?? []);
  const status = await runPreTrafficChecks(EVENT, {
    codeDeploy: codeDeploy.api,
    lambda: lambda.api,
    functionNames: { listPets: 'l', createPet: 'c', getPet: 'g', routeNotFound: 'r', authorizer: AUTHORIZER },
    clock: { getRemainingTimeInMillis: () => REMAINING_MS },
    checkContext: (runId) => ({ runId, unknownApiKey: 'pets_an-unknown-key-of-the-right-shape', unknownPetId: 1, now: new Date() }),
    checkKeys,
  }).finally(() => output.stop());
  return { status, started, invocations: lambda.calls.length, bearerTokens, logged: output.json() };
}

/** The check key the run left in the table: there is exactly one. */
async function checkKeyOf(records: () => Promise<ApiKeyRecord[]>): Promise<ApiKeyRecord> {
  const stored = await records();
  expect(stored).toEqual([expect.objectContaining({ name: CHECK_KEY_NAME })]);
  return stored[0]!;
}

describe("the pre-traffic hook's check key", () => {
  it('expires when the hook’s invocation ends, is revoked after the checks, and was logged by id before it was written', async () => {
    const { hookStore, tableStore, records } = await keysTable();
    // The hook's log as it stood when the write left.
    let loggedBeforeWrite: Array<Record<string, unknown>> = [];
    const watched: CheckKeyStore = {
      add: (record) => {
        loggedBeforeWrite = hookLog!.json().filter((line) => line.message === 'Issuing a check key' && line.keyId === record.keyId);
        return hookStore.add(record);
      },
      revokeByHash: (keyHash, at) => hookStore.revokeByHash(keyHash, at),
    };
    const { status, started, logged, bearerTokens } = await runHook(watched, tableStore);
    expect(status).toBe('Succeeded');
    const key = await checkKeyOf(records);
    expect(key.revokedAt).toBeDefined();
    expect(Date.parse(key.expiresAt!) - started).toBeGreaterThanOrEqual(REMAINING_MS - 1_000);
    expect(Date.parse(key.expiresAt!) - started).toBeLessThanOrEqual(REMAINING_MS + 1_000);
    expect(loggedBeforeWrite).toEqual([expect.objectContaining({ keyId: key.keyId, expiresAt: key.expiresAt })]);
    const apiKey = bearerTokens().find((token) => hashApiKey(token) === key.keyHash)!;
    expect(JSON.stringify(logged)).not.toContain(apiKey);
  });

  it('runs the checks and is revoked when the answer to its write is lost and the SDK’s retry meets the write itself', async () => {
    const { hookStore, tableStore, records } = await keysTable();
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', times: 1 });
    const { status, invocations } = await runHook(hookStore, tableStore);
    expect(status).toBe('Succeeded');
    const checks = checksFor('authorizer', {
      runId: 'r',
      unknownApiKey: 'k',
      unknownPetId: 1,
      now: new Date(),
      checkKey: { apiKey: 'k', keyId: 'i' },
    });
    expect(invocations).toBe(checks.length);
    expect((await checkKeyOf(records)).revokedAt).toBeDefined();
  });

  it('is revoked when its write seemed to fail, every answer lost, though the write landed', async () => {
    const { hookStore, tableStore, records } = await keysTable();
    proxy.inject({ fault: 'lose-response', operation: 'PutItem' });
    const { status, invocations } = await runHook(hookStore, tableStore);
    expect(status).toBe('Failed');
    expect(invocations).toBe(0);
    expect((await checkKeyOf(records)).revokedAt).toBeDefined();
  });

  it('expires by itself at the hook’s end when every revocation is throttled, and the run fails', async () => {
    const { hookStore, tableStore, records } = await keysTable();
    proxy.inject({ fault: 'throttle', operation: 'UpdateItem' });
    const { status, started, bearerTokens } = await runHook(hookStore, tableStore);
    expect(status).toBe('Failed');
    const key = await checkKeyOf(records);
    expect(key.revokedAt).toBeUndefined();
    const expiresAt = Date.parse(key.expiresAt!);
    expect(expiresAt).toBeLessThanOrEqual(started + REMAINING_MS + 1_000);
    // The key the checks used, as the authorizer's events carried it: the one place it appears.
    const apiKey = bearerTokens().find((token) => hashApiKey(token) === key.keyHash);
    const verdictAt = (now: number) => createAuthenticator(tableStore, { now: () => now })(`Bearer ${apiKey}`);
    expect(await verdictAt(expiresAt - 1)).toEqual({ outcome: 'allowed', keyId: key.keyId });
    expect(await verdictAt(expiresAt)).toEqual({ outcome: 'invalid' });
  });
});
