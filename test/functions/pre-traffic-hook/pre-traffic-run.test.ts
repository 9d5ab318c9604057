import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type { ApiKeyRecord, ApiKeyStore } from '../../../shared/domain/auth/api-key-store';
import { hashApiKey } from '../../../shared/domain/auth/api-keys';
import type { AuthorizerContext } from '../../../shared/domain/auth/authorizer-context';
import { CHECK_KEY_NAME, type CheckKeyStore } from '../../../functions/pre-traffic-hook/check-keys';
import {
  CHECK_ANSWER_LIMIT_MS,
  CHECK_KEY_CALL_LIMIT_MS,
  HOOK_START_MS,
  preTrafficHookTimeoutMs,
  TRAFFIC_START_LIMIT_MS,
} from '../../../functions/pre-traffic-hook/hook-time-budget';
import { CODEDEPLOY_CALL_LIMIT_MS } from '../../../shared/facts/time-budget';
import {
  runPreTrafficChecks,
  type CodeDeployApi,
  type LambdaApi,
  type PreTrafficCheckDependencies,
} from '../../../functions/pre-traffic-hook/pre-traffic-run';
import {
  CHECK_KEY_SHAPES,
  checksFor,
  keylessChecksFor,
  type CheckKeys,
  type CheckKeyShape,
} from '../../../functions/pre-traffic-hook/pre-traffic-expectations';
import {
  DEPLOYED_NAMES,
  FUNCTION_DEPLOYED_AS,
  authorizationOf,
  authorizerOver,
  FAKE_CURRENT_VERSION,
  fakeCodeDeploy,
  fakeLambda,
  type FakeAnswer,
  type FakeLambdaOptions,
  type FakeTarget,
  type InvokeCall,
} from '../../helpers/fake-codedeploy';
import { InMemoryApiKeyStore } from '../../helpers/in-memory-stores';
import { captureOutput } from '../../helpers/output';
import { API_FUNCTIONS, type ApiFunctionName } from '../../../shared/facts/function-names';
import { PRE_TRAFFIC_ANSWERS_PATH, type PreTrafficAnswers } from '../../../tools/record-pre-traffic-answers';

// The hook's own log lines are part of what is checked here: INFO before its logger is loaded.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
});

/** The handlers' answers to each check, as `npm run record:pre-traffic` recorded them (see verdicts.test.ts). */
const RECORDED: PreTrafficAnswers = JSON.parse(readFileSync(PRE_TRAFFIC_ANSWERS_PATH, 'utf8'));

const DEPLOYMENT = 'd-EXAMPLE11';
const EXECUTION = 'hook-execution-1';
const EVENT = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: EXECUTION };
const RUN_ID = `pre-traffic-${DEPLOYMENT}`;
/** The version the deployments move from: the one serving now. */
const OLD = FAKE_CURRENT_VERSION;
/** The function that sends a passed canary its traffic. */
const TRAFFIC = 'AnimalStore-Staging-deploymentTraffic-D4E5F6';

const NOW = new Date('2026-11-25T12:00:00Z');
const context = (runId: string) => ({ runId, unknownApiKey: 'pets_an-unknown-key', unknownPetId: 12_345, now: NOW });

/** Which check of its function's run an invocation carries: its request id ends with the check's place, from 1. */
function checkIndexOf(call: InvokeCall): number {
  const { requestId } = (call.event as { requestContext: { requestId: string } }).requestContext;
  return Number(/-(\d+)$/.exec(requestId)![1]) - 1;
}

type Answers = (call: InvokeCall) => FakeAnswer | Promise<FakeAnswer>;
type Override = (fn: ApiFunctionName, index: number) => FakeAnswer | undefined;

/**
 * Each version answers each check as the recorded bundles did, unless `onNew` answers it otherwise for the
 * version being deployed, or `onOld` for the one serving now.
 */
function recordedAnswers(onNew: Override = () => undefined, onOld: Override = () => undefined): Answers {
  return (call) => {
    const fn = FUNCTION_DEPLOYED_AS.get(call.functionName ?? '')!;
    const index = checkIndexOf(call);
    const override = call.qualifier === OLD ? onOld : onNew;
    return override(fn, index) ?? { payload: RECORDED[fn][index] };
  };
}

/** Two versions of a function, each answering as its own: the one serving now, and the one being deployed. */
function versions(old: Answers, deployed: Answers): Answers {
  return (call) => (call.qualifier === OLD ? old(call) : deployed(call));
}

/** An HTTP answer with our Error body. */
function errorAnswer(status: number, code: string): FakeAnswer {
  return {
    payload: {
      statusCode: status,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, message: 'x', status }),
    },
  };
}

/** The stage's keys table as the hook and the authorizer share it; `refusing` makes one of the hook's two writes fail. */
function keysTable(refusing?: keyof CheckKeyStore) {
  const keys = new InMemoryApiKeyStore();
  const refuse = (call: keyof CheckKeyStore) => {
    if (refusing === call)
      throw Object.assign(new Error(`User is not authorized to perform: dynamodb:${call}`), { name: 'AccessDeniedException' });
  };
  const store: CheckKeyStore = {
    async add(record) {
      refuse('add');
      await keys.add(record);
    },
    async revokeByHash(keyHash, at) {
      refuse('revokeByHash');
      return keys.revokeByHash(keyHash, at);
    },
  };
  return { store, records: (): ApiKeyRecord[] => [...keys.keys.values()], keys };
}

/** Where each key shape's check is in the authorizer's run: the check whose event carries that shape's key. */
const KEYED_CHECK_AT = (() => {
  const marked = Object.fromEntries(CHECK_KEY_SHAPES.map((shape) => [shape, { apiKey: `pets_${shape}`, keyId: shape }])) as CheckKeys;
  const checks = checksFor('authorizer', { ...context('x'), checkKeys: marked });
  const at = (shape: CheckKeyShape) => checks.findIndex((check) => JSON.stringify(check.event).includes(`Bearer pets_${shape}"`));
  return Object.fromEntries(CHECK_KEY_SHAPES.map((shape) => [shape, at(shape)])) as Record<CheckKeyShape, number>;
})();

/** The run's check keys as the authorizer's events carried them (the one place the keys appear), and the records the table holds for them. */
function checkKeysOf(records: ApiKeyRecord[], calls: InvokeCall[]) {
  const of = (shape: CheckKeyShape) => {
    const call = calls.find((candidate) => checkIndexOf(candidate) === KEYED_CHECK_AT[shape])!;
    const apiKey = authorizationOf(call)!.replace(/^Bearer /, '');
    const record = records.find((candidate) => candidate.keyHash === hashApiKey(apiKey))!;
    return { apiKey, keyId: record.keyId, record };
  };
  const keys = { withExpiry: of('withExpiry'), withoutExpiry: of('withoutExpiry'), revoked: of('revoked') };
  return { keys, checkKeys: keys as CheckKeys };
}

/** The keys table as a broken authorizer version reads it: each record it finds passed through `misread`. */
function misreading(store: ApiKeyStore, misread: (record: ApiKeyRecord) => ApiKeyRecord): ApiKeyStore {
  return {
    findByHash: async (keyHash) => {
      const record = await store.findByHash(keyHash);
      return record && misread(record);
    },
    add: (record) => store.add(record),
    list: () => store.list(),
    revoke: (keyId, at) => store.revoke(keyId, at),
    revokeByHash: (keyHash, at) => store.revokeByHash(keyHash, at),
  };
}

interface HookOptions {
  readonly failing?: keyof CodeDeployApi;
  readonly remainingMs?: number;
  /** The keys table the hook issues its check keys in; none at all when null. */
  readonly keys?: ReturnType<typeof keysTable> | null;
  readonly queueing?: FakeLambdaOptions['queueing'];
}

function hook(targets: FakeTarget[], answers: Answers = recordedAnswers(), options: HookOptions = {}) {
  const codeDeploy = fakeCodeDeploy(DEPLOYMENT, targets, options.failing === undefined ? {} : { failing: options.failing });
  const lambda = fakeLambda(answers, options.queueing === undefined ? {} : { queueing: options.queueing });
  const keys = options.keys === undefined ? keysTable() : options.keys;
  const dependencies: PreTrafficCheckDependencies = {
    codeDeploy: codeDeploy.api,
    lambda: lambda.api,
    functionNames: DEPLOYED_NAMES,
    trafficFunction: TRAFFIC,
    clock: { getRemainingTimeInMillis: () => options.remainingMs ?? 85_000 },
    checkContext: context,
    ...(keys === null ? {} : { checkKeys: keys.store }),
    limits: { checkAnswerMs: 200, codeDeployCallMs: 200, checkKeyCallMs: 200, trafficStartMs: 200 },
  };
  let logged: Array<Record<string, unknown>> = [];
  const run = async (event: unknown = EVENT) => {
    const output = captureOutput({ silent: true });
    try {
      return await runPreTrafficChecks(event, dependencies);
    } finally {
      output.stop();
      logged = output.json();
    }
  };
  return {
    run,
    reports: codeDeploy.reports,
    calls: lambda.calls,
    queued: lambda.queued,
    logged: () => logged,
    /** The checks each version was asked, by their place in the run. */
    asked: (version: string) => lambda.calls.filter((call) => call.qualifier === version).map(checkIndexOf),
  };
}

/** The asynchronous invocation that starts a deployment's traffic run for one function. */
const trafficStart = (fn: ApiFunctionName) => ({
  functionName: TRAFFIC,
  qualifier: undefined,
  event: { deploymentId: DEPLOYMENT, function: fn },
});

describe('the pre-traffic hook', () => {
  it.each(API_FUNCTIONS)(
    'invokes the version of %s being deployed with each of its checks, reports Succeeded and starts its deployment traffic',
    async (fn) => {
      const keys = keysTable();
      const answers = fn === 'authorizer' ? authorizerOver(keys.keys) : recordedAnswers();
      const { run, reports, calls, queued } = hook([{ functionName: DEPLOYED_NAMES[fn], targetVersion: '7' }], answers, { keys });
      await expect(run()).resolves.toBe('Succeeded');
      // The authorizer's keys are issued for the run: its events are the one place the keys appear.
      const checkKeys = fn === 'authorizer' ? { checkKeys: checkKeysOf(keys.records(), calls).checkKeys } : {};
      const checks = checksFor(fn, { ...context(RUN_ID), ...checkKeys });
      expect(calls).toEqual(
        checks.map((check) => ({ functionName: DEPLOYED_NAMES[fn], qualifier: '7', event: JSON.parse(JSON.stringify(check.event)) })),
      );
      expect(reports).toEqual([{ deploymentId: DEPLOYMENT, lifecycleEventHookExecutionId: EXECUTION, status: 'Succeeded' }]);
      expect(queued).toEqual([trafficStart(fn)]);
    },
  );

  it('reports Failed when the new version crashes where the old one answers', async () => {
    const keys = keysTable();
    const crashed: Answers = () => ({
      functionError: 'Unhandled',
      payload: { errorType: 'Runtime.ImportModuleError', errorMessage: "Error: Cannot find module 'node:https'" },
    });
    const { run, reports, queued } = hook(
      [{ functionName: DEPLOYED_NAMES.authorizer, targetVersion: '3' }],
      versions(authorizerOver(keys.keys), crashed),
      {
        keys,
      },
    );
    await expect(run()).resolves.toBe('Failed');
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
    expect(queued).toEqual([]);
  });

  it('reports Failed when the invocation throws, asking the old version nothing: the new one was never reached', async () => {
    const throttled = recordedAnswers(() => ({ throws: Object.assign(new Error('Rate Exceeded.'), { name: 'TooManyRequestsException' }) }));
    const { run, reports, asked } = hook([{ functionName: DEPLOYED_NAMES.createPet, targetVersion: '3' }], throttled);
    await expect(run()).resolves.toBe('Failed');
    expect(asked(OLD)).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('gives up on a version that does not answer in time, and still reports Failed', async () => {
    const { run, reports, calls, asked } = hook(
      [{ functionName: DEPLOYED_NAMES.listPets, targetVersion: '3' }],
      recordedAnswers(() => 'never'),
    );
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toHaveLength(checksFor('listPets', context('x')).length);
    expect(asked(OLD)).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('runs no check it could not finish before its own timeout, and reports Failed', async () => {
    const { run, reports, calls } = hook([{ functionName: DEPLOYED_NAMES.listPets, targetVersion: '3' }], recordedAnswers(), {
      remainingMs: 300,
    });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed, invoking nothing, for a function it does not check', async () => {
    const { run, reports, calls, queued } = hook([{ functionName: 'SomeoneElses-Function', targetVersion: '3' }]);
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(queued).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed, invoking nothing, when the deployment names no published version', async () => {
    for (const targetVersion of [undefined, '$LATEST', 'live']) {
      const { run, reports, calls } = hook([
        { functionName: DEPLOYED_NAMES.getPet, ...(targetVersion === undefined ? {} : { targetVersion }) },
      ]);
      await expect(run(), String(targetVersion)).resolves.toBe('Failed');
      expect(calls).toEqual([]);
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
    }
  });

  it('knows a function CodeDeploy names by its ARN', async () => {
    const arn = `arn:aws:lambda:eu-west-1:111111111111:function:${DEPLOYED_NAMES.routeNotFound}`;
    const answers = recordedAnswers();
    const { run, calls } = hook([{ functionName: arn, targetVersion: '4' }], (call) =>
      answers({ ...call, functionName: DEPLOYED_NAMES.routeNotFound }),
    );
    await expect(run()).resolves.toBe('Succeeded');
    expect(calls.map((call) => [call.functionName, call.qualifier])).toEqual([
      [DEPLOYED_NAMES.routeNotFound, '4'],
      [DEPLOYED_NAMES.routeNotFound, '4'],
    ]);
  });

  it.each(['listDeploymentTargets', 'getDeploymentTarget'] as const)(
    'reports Failed when CodeDeploy refuses %s, so the deployment cannot move unchecked',
    async (failing) => {
      const { run, reports, calls } = hook([{ functionName: DEPLOYED_NAMES.getPet, targetVersion: '3' }], recordedAnswers(), { failing });
      await expect(run()).resolves.toBe('Failed');
      expect(calls).toEqual([]);
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
    },
  );

  it('throws when CodeDeploy refuses the report, so the failure shows: a deployment without a report cannot pass', async () => {
    const { run, queued } = hook([{ functionName: DEPLOYED_NAMES.getPet, targetVersion: '3' }], recordedAnswers(), {
      failing: 'putLifecycleEventHookExecutionStatus',
    });
    await expect(run()).rejects.toThrow(/PutLifecycleEventHookExecutionStatus/i);
    expect(queued).toEqual([]);
  });

  it('refuses an event CodeDeploy did not send: there is nothing to report to', async () => {
    const { run, reports, calls } = hook([{ functionName: DEPLOYED_NAMES.getPet, targetVersion: '3' }]);
    await expect(run({ DeploymentId: DEPLOYMENT })).rejects.toThrow(/LifecycleEventHookExecutionId/);
    expect(reports).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe('the pre-traffic hook, judging the new version against the one serving now', () => {
  const GET_PET_TARGET: FakeTarget = { functionName: DEPLOYED_NAMES.getPet, targetVersion: '12' };
  const GET_PET = [GET_PET_TARGET];
  /** getPet's check of a pet that does not exist: the one that reads the pets table. */
  const READS_THE_STORE = 1;
  const storeDown: Override = (_, index) => (index === READS_THE_STORE ? errorAnswer(503, 'service_unavailable') : undefined);

  it('lets a new version through when its failed check fails the same way on the old one, and logs it as excused', async () => {
    const { run, reports, asked, logged, queued } = hook(GET_PET, recordedAnswers(storeDown, storeDown));
    await expect(run()).resolves.toBe('Succeeded');
    // The old version is asked only what the new one failed.
    expect(asked('12')).toEqual([0, 1]);
    expect(asked(OLD)).toEqual([READS_THE_STORE]);
    expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
    const check = checksFor('getPet', context(RUN_ID))[READS_THE_STORE]!.name;
    expect(logged().filter((line) => line.level === 'WARN')).toEqual([
      expect.objectContaining({
        message: 'Check excused',
        check,
        version: '12',
        oldVersion: OLD,
        detail: `answered 503 service_unavailable, expected 404: fails the same way on version ${OLD}`,
      }),
    ]);
    expect(logged()).toContainEqual(expect.objectContaining({ message: expect.stringMatching(/^Reported Succeeded/), excused: [check] }));
    expect(queued).toEqual([trafficStart('getPet')]);
  });

  it('fails a new version that answers 500 where the old one answers 404, and says what the old one answered', async () => {
    const broken: Override = (_, index) => (index === READS_THE_STORE ? errorAnswer(500, 'internal_error') : undefined);
    const { run, reports, asked, logged, queued } = hook(GET_PET, recordedAnswers(broken));
    await expect(run()).resolves.toBe('Failed');
    expect(asked(OLD)).toEqual([READS_THE_STORE]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
    expect(logged()).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'Check failed',
        detail: `answered 500 internal_error, expected 404 (passes on version ${OLD})`,
      }),
    );
    expect(queued).toEqual([]);
  });

  it('fails a new version whose check fails otherwise on the old one', async () => {
    const broken: Override = (_, index) => (index === READS_THE_STORE ? errorAnswer(500, 'internal_error') : undefined);
    const { run } = hook(GET_PET, recordedAnswers(broken, storeDown));
    await expect(run()).resolves.toBe('Failed');
  });

  it.each([
    ['names no version serving now', null],
    ['names no published version serving now', '$LATEST'],
    ['names the new version as the one serving now', '12'],
  ])('judges the new version alone when the deployment %s', async (_, currentVersion) => {
    const { run, calls } = hook([{ ...GET_PET_TARGET, currentVersion }], recordedAnswers(storeDown, storeDown));
    await expect(run()).resolves.toBe('Failed');
    expect(calls.map((call) => call.qualifier)).toEqual(['12', '12']);
  });

  it('starts the traffic run of each function that passed, when a deployment moves several', async () => {
    const targets: FakeTarget[] = [
      { functionName: DEPLOYED_NAMES.listPets, targetVersion: '4' },
      { functionName: DEPLOYED_NAMES.getPet, targetVersion: '5' },
    ];
    const { run, queued } = hook(targets);
    await expect(run()).resolves.toBe('Succeeded');
    expect(queued).toEqual([trafficStart('listPets'), trafficStart('getPet')]);
  });

  it('starts no traffic run when one function of the deployment fails', async () => {
    const targets: FakeTarget[] = [
      { functionName: DEPLOYED_NAMES.listPets, targetVersion: '4' },
      { functionName: DEPLOYED_NAMES.getPet, targetVersion: '5' },
    ];
    const broken: Override = (fn, index) => (fn === 'getPet' && index === READS_THE_STORE ? errorAnswer(500, 'internal_error') : undefined);
    const { run, queued } = hook(targets, recordedAnswers(broken));
    await expect(run()).resolves.toBe('Failed');
    expect(queued).toEqual([]);
  });

  it.each([
    [
      'Lambda refuses it',
      { throws: Object.assign(new Error('User is not authorized to perform: lambda:InvokeFunction'), { name: 'AccessDeniedException' }) },
    ],
    ['Lambda never answers', 'never'],
  ] as const)(
    'reports Succeeded all the same when the traffic run does not start because %s, and logs it as an ERROR',
    async (_, queueing) => {
      const { run, reports, logged } = hook(GET_PET, recordedAnswers(), { queueing });
      await expect(run()).resolves.toBe('Succeeded');
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
      expect(logged()).toContainEqual(
        expect.objectContaining({
          level: 'ERROR',
          message: expect.stringMatching(/^The deployment traffic did not start/),
          function: 'getPet',
        }),
      );
    },
  );
});

describe('the pre-traffic hook, checking the authorizer with keys the keys table holds', () => {
  const AUTHORIZER: FakeTarget[] = [{ functionName: DEPLOYED_NAMES.authorizer, targetVersion: '9' }];
  const refusingEveryKey = (verdict: AuthorizerContext): AuthorizerContext =>
    verdict.outcome === 'allowed' ? { outcome: 'invalid' } : verdict;
  const allChecks = checksFor('authorizer', {
    ...context('x'),
    checkKeys: {
      withExpiry: { apiKey: 'k', keyId: 'k' },
      withoutExpiry: { apiKey: 'k', keyId: 'k' },
      revoked: { apiKey: 'k', keyId: 'k' },
    },
  });
  const keylessChecks = keylessChecksFor('authorizer', context('x'));
  /** Both authorizer versions as the real one is: the old over the keys table, the new over the table as `store` makes a broken version read it. */
  const newAuthorizer = (keys: ApiKeyStore, store: (keys: ApiKeyStore) => ApiKeyStore) =>
    versions(authorizerOver(keys), authorizerOver(store(keys)));

  it('issues a key of each shape for the run, sees the new version judge each, and leaves none working before reporting Succeeded', async () => {
    const keys = keysTable();
    const { run, reports, calls } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys });
    await expect(run()).resolves.toBe('Succeeded');
    const { keys: issued } = checkKeysOf(keys.records(), calls);
    expect(keys.records()).toHaveLength(3);
    expect(keys.records().every((record) => record.name === CHECK_KEY_NAME && record.revokedAt !== undefined)).toBe(true);
    // Expiring, as only check keys do; without an expiry, as clients' keys; revoked from its first write, as a client's revoked key.
    expect(issued.withExpiry.record.expiresAt).toEqual(expect.any(String));
    expect(issued.withoutExpiry.record.expiresAt).toBeUndefined();
    expect(issued.revoked.record).toEqual(expect.not.objectContaining({ expiresAt: expect.anything() }));
    expect(issued.revoked.record.revokedAt).toBe(issued.revoked.record.createdAt);
    expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
  });

  it('fails a new authorizer that refuses keys without an expiry, which the old one accepts', async () => {
    const keys = keysTable();
    // Its lookup reads a missing expiry as one that does not parse, which the real check refuses.
    const needsAnExpiry = (store: ApiKeyStore) => misreading(store, (record) => ({ ...record, expiresAt: record.expiresAt ?? 'none' }));
    const { run, asked, logged, queued } = hook(AUTHORIZER, newAuthorizer(keys.keys, needsAnExpiry), { keys });
    await expect(run()).resolves.toBe('Failed');
    const withoutExpiry = KEYED_CHECK_AT.withoutExpiry;
    expect(asked(OLD)).toEqual([withoutExpiry]);
    expect(logged()).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        check: allChecks[withoutExpiry]!.name,
        detail: `the verdict was invalid, expected allowed (passes on version ${OLD})`,
      }),
    );
    expect(keys.records().every((record) => record.revokedAt !== undefined)).toBe(true);
    expect(queued).toEqual([]);
  });

  it('fails a new authorizer that accepts a revoked key, which the old one refuses', async () => {
    const keys = keysTable();
    const ignoresRevocation = (store: ApiKeyStore) => misreading(store, ({ revokedAt: _ignored, ...record }) => record);
    const { run, asked } = hook(AUTHORIZER, newAuthorizer(keys.keys, ignoresRevocation), { keys });
    await expect(run()).resolves.toBe('Failed');
    expect(asked(OLD)).toEqual([KEYED_CHECK_AT.revoked]);
    expect(keys.records().every((record) => record.revokedAt !== undefined)).toBe(true);
  });

  it('fails a version that refuses every key, and revokes the keys all the same', async () => {
    const keys = keysTable();
    const { run, reports, calls } = hook(AUTHORIZER, versions(authorizerOver(keys.keys), authorizerOver(keys.keys, refusingEveryKey)), {
      keys,
    });
    await expect(run()).resolves.toBe('Failed');
    const accepting = allChecks.filter((check) => check.expect.kind === 'verdict' && check.expect.outcome === 'allowed');
    expect(calls).toHaveLength(allChecks.length + accepting.length);
    expect(keys.records()).toHaveLength(3);
    expect(keys.records().every((record) => record.name === CHECK_KEY_NAME && record.revokedAt !== undefined)).toBe(true);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('fails a version that accepts a key as another one', async () => {
    const keys = keysTable();
    const asAnother = (verdict: AuthorizerContext): AuthorizerContext =>
      verdict.outcome === 'allowed' ? { ...verdict, keyId: 'key_other' } : verdict;
    const { run } = hook(AUTHORIZER, versions(authorizerOver(keys.keys), authorizerOver(keys.keys, asAnother)), { keys });
    await expect(run()).resolves.toBe('Failed');
  });

  it('revokes the keys when the new version crashes or never answers', async () => {
    for (const answer of [{ functionError: 'Unhandled', payload: { errorType: 'Error', errorMessage: 'boom' } }, 'never'] as const) {
      const keys = keysTable();
      const { run } = hook(
        AUTHORIZER,
        versions(authorizerOver(keys.keys), () => answer),
        { keys },
      );
      await expect(run(), JSON.stringify(answer)).resolves.toBe('Failed');
      expect(keys.records(), JSON.stringify(answer)).toHaveLength(3);
      expect(
        keys.records().every((record) => record.revokedAt !== undefined),
        JSON.stringify(answer),
      ).toBe(true);
    }
  });

  it('leaves itself the time to revoke the keys: it runs no check that would end too late for that and the report', async () => {
    const keys = keysTable();
    // Enough for a check, the report and the traffic start, not for the revocations as well.
    const { run, calls } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys, remainingMs: 700 });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(keys.records().every((record) => record.revokedAt !== undefined)).toBe(true);
  });

  it('reports Failed when the keys table refuses the hook its keys (access denied), after the checks that need none', async () => {
    const keys = keysTable('add');
    const { run, reports, calls, logged } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys });
    await expect(run()).resolves.toBe('Failed');
    expect(calls.map(checkIndexOf)).toEqual(keylessChecks.map((_, index) => index));
    expect(keys.records()).toEqual([]);
    expect(logged()).toContainEqual(
      expect.objectContaining({ level: 'ERROR', check: 'issues its check keys', detail: expect.stringContaining('AccessDeniedException') }),
    );
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed when the keys cannot be revoked, even though every check passed', async () => {
    const keys = keysTable('revokeByHash');
    const { run, calls, logged } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toHaveLength(allChecks.length);
    const unrevoked = logged().filter((line) => line.check === 'revokes its check key' && line.level === 'ERROR');
    expect(unrevoked.map((line) => line.detail)).toEqual([
      expect.stringMatching(/^key_\w+ has no expiry and may still work: revoke it now/),
      expect.stringMatching(/^key_\w+ is still active until it expires at /),
    ]);
  });

  it('reports Failed, invoking nothing, when it has no keys table to issue the keys in', async () => {
    const { run, calls } = hook(AUTHORIZER, recordedAnswers(), { keys: null });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
  });

  it('issues no key for a function whose checks need none', async () => {
    const keys = keysTable();
    const { run } = hook([{ functionName: DEPLOYED_NAMES.listPets, targetVersion: '9' }], recordedAnswers(), { keys });
    await expect(run()).resolves.toBe('Succeeded');
    expect(keys.records()).toEqual([]);
  });
});

describe("the pre-traffic hook's timeout", () => {
  it.each(API_FUNCTIONS)(
    'leaves time for every call of checking %s at its limit: both versions of every check, each key, the report and the traffic start',
    async (fn) => {
      // Time passes only in the calls, each taking as long as it may.
      let usedMs = HOOK_START_MS;
      const timeoutMs = preTrafficHookTimeoutMs();
      const taking =
        <A extends unknown[], R>(call: (...args: A) => R, ms: number | ((...args: A) => number)) =>
        (...args: A): R => {
          usedMs += typeof ms === 'number' ? ms : ms(...args);
          return call(...args);
        };
      const codeDeploy = fakeCodeDeploy(DEPLOYMENT, [{ functionName: DEPLOYED_NAMES[fn], targetVersion: '7' }]);
      const slowCodeDeploy: CodeDeployApi = {
        listDeploymentTargets: taking(codeDeploy.api.listDeploymentTargets, CODEDEPLOY_CALL_LIMIT_MS),
        getDeploymentTarget: taking(codeDeploy.api.getDeploymentTarget, CODEDEPLOY_CALL_LIMIT_MS),
        putLifecycleEventHookExecutionStatus: taking(codeDeploy.api.putLifecycleEventHookExecutionStatus, CODEDEPLOY_CALL_LIMIT_MS),
      };
      // Every version answers every check wrong, the same way: each check is asked of both, and excused.
      const lambda = fakeLambda(() => ({ payload: 'not an answer' }));
      const slowLambda: LambdaApi = {
        invoke: taking(lambda.api.invoke, (input) => (input.InvocationType === 'Event' ? TRAFFIC_START_LIMIT_MS : CHECK_ANSWER_LIMIT_MS)),
      };
      const keys = keysTable();
      const slowKeys: CheckKeyStore = {
        add: taking(keys.store.add, CHECK_KEY_CALL_LIMIT_MS),
        revokeByHash: taking(keys.store.revokeByHash, CHECK_KEY_CALL_LIMIT_MS),
      };
      const output = captureOutput({ silent: true });
      const status = await runPreTrafficChecks(EVENT, {
        codeDeploy: slowCodeDeploy,
        lambda: slowLambda,
        functionNames: DEPLOYED_NAMES,
        trafficFunction: TRAFFIC,
        clock: { getRemainingTimeInMillis: () => timeoutMs - usedMs },
        checkContext: context,
        checkKeys: slowKeys,
      }).finally(() => output.stop());

      expect(status).toBe('Succeeded');
      const checks = fn === 'authorizer' ? allChecks() : checksFor(fn, context('x'));
      expect(lambda.calls).toHaveLength(2 * checks.length);
      expect(lambda.queued).toEqual([trafficStart(fn)]);
      expect(keys.records().every((record) => record.revokedAt !== undefined)).toBe(true);
      expect(usedMs).toBeLessThanOrEqual(timeoutMs);
    },
  );

  function allChecks() {
    const key = { apiKey: 'k', keyId: 'k' };
    return checksFor('authorizer', { ...context('x'), checkKeys: { withExpiry: key, withoutExpiry: key, revoked: key } });
  }
});
