import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import type { ApiKeyRecord } from '../../../shared/domain/auth/api-key-store';
import { hashApiKey } from '../../../shared/domain/auth/api-keys';
import type { AuthorizerContext } from '../../../shared/domain/auth/authorizer-context';
import {
  CHECK_KEY_NAME,
  runPreTrafficChecks,
  type CheckKeyStore,
  type CodeDeployApi,
  type PreTrafficCheckDependencies,
} from '../../../functions/pre-traffic-hook/pre-traffic-run';
import { checksFor } from '../../../functions/pre-traffic-hook/pre-traffic-expectations';
import {
  authorizationOf,
  authorizerOver,
  fakeCodeDeploy,
  fakeLambda,
  type FakeAnswer,
  type FakeTarget,
  type InvokeCall,
} from '../../helpers/fake-codedeploy';
import { InMemoryApiKeyStore } from '../../helpers/in-memory-stores';
import { API_FUNCTIONS, type ApiFunctionName } from '../../../shared/facts/function-names';

/** The staging bundles' answers to each check (see verdicts.test.ts). */
const RECORDED: Record<ApiFunctionName, unknown[]> = JSON.parse(
  readFileSync(join(PROJECT_ROOT, 'test', 'fixtures', 'pre-traffic-answers.json'), 'utf8'),
);

const DEPLOYMENT = 'd-EXAMPLE11';
const EXECUTION = 'hook-execution-1';
const EVENT = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: EXECUTION };

/** The deployed name of each function, as the hook's configuration gives them. */
const NAMES = Object.fromEntries(API_FUNCTIONS.map((fn) => [fn, `AnimalStore-Staging-${fn}-A1B2C3`])) as Record<ApiFunctionName, string>;
const FUNCTION_OF = new Map(Object.entries(NAMES).map(([fn, name]) => [name, fn as ApiFunctionName]));

const NOW = new Date('2026-11-25T12:00:00Z');
const context = (runId: string) => ({ runId, unknownApiKey: 'pets_an-unknown-key', unknownPetId: 12_345, now: NOW });

/** Each function answers its checks as the recorded bundles did, in order. */
function recordedAnswers(override: (fn: ApiFunctionName, index: number) => FakeAnswer | undefined = () => undefined) {
  const answered = new Map<ApiFunctionName, number>();
  return (call: InvokeCall): FakeAnswer => {
    const fn = FUNCTION_OF.get(call.functionName ?? '')!;
    const index = answered.get(fn) ?? 0;
    answered.set(fn, index + 1);
    return override(fn, index) ?? { payload: RECORDED[fn][index] };
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

interface HookOptions {
  readonly failing?: keyof CodeDeployApi;
  readonly remainingMs?: number;
  /** The keys table the hook issues its check key in; none at all when null. */
  readonly keys?: ReturnType<typeof keysTable> | null;
}

function hook(
  targets: FakeTarget[],
  answers: (call: InvokeCall) => FakeAnswer | Promise<FakeAnswer> = recordedAnswers(),
  options: HookOptions = {},
) {
  const codeDeploy = fakeCodeDeploy(DEPLOYMENT, targets, options.failing === undefined ? {} : { failing: options.failing });
  const lambda = fakeLambda(answers);
  const keys = options.keys === undefined ? keysTable() : options.keys;
  const dependencies: PreTrafficCheckDependencies = {
    codeDeploy: codeDeploy.api,
    lambda: lambda.api,
    functionNames: NAMES,
    clock: { getRemainingTimeInMillis: () => options.remainingMs ?? 85_000 },
    checkContext: context,
    ...(keys === null ? {} : { checkKeys: keys.store }),
    limits: { checkAnswerMs: 200, codeDeployCallMs: 200, checkKeyCallMs: 200 },
  };
  return { run: (event: unknown = EVENT) => runPreTrafficChecks(event, dependencies), reports: codeDeploy.reports, calls: lambda.calls };
}

describe('the pre-traffic hook', () => {
  it.each(API_FUNCTIONS)('invokes the version of %s being deployed with each of its checks, and reports Succeeded', async (fn) => {
    const keys = keysTable();
    const answers = fn === 'authorizer' ? authorizerOver(keys.keys) : recordedAnswers();
    const { run, reports, calls } = hook([{ functionName: NAMES[fn], targetVersion: '7' }], answers, { keys });
    await expect(run()).resolves.toBe('Succeeded');
    // The authorizer's key is issued for the run: its event is the one place the key appears.
    const issued = keys.records()[0];
    const apiKey = fn === 'authorizer' ? authorizationOf(calls.at(-1)!)!.replace(/^Bearer /, '') : '';
    const checkKey = issued === undefined ? {} : { checkKey: { apiKey, keyId: issued.keyId } };
    const checks = checksFor(fn, { ...context(`pre-traffic-${DEPLOYMENT}`), ...checkKey });
    expect(calls).toEqual(
      checks.map((check) => ({ functionName: NAMES[fn], qualifier: '7', event: JSON.parse(JSON.stringify(check.event)) })),
    );
    expect(reports).toEqual([{ deploymentId: DEPLOYMENT, lifecycleEventHookExecutionId: EXECUTION, status: 'Succeeded' }]);
  });

  it('reports Failed when one answer is wrong', async () => {
    const wrong = recordedAnswers((fn, index) =>
      fn === 'getPet' && index === 1
        ? {
            payload: {
              statusCode: 500,
              headers: { 'content-type': 'application/json' },
              body: '{"code":"internal_error","message":"x","status":500}',
            },
          }
        : undefined,
    );
    const { run, reports } = hook([{ functionName: NAMES.getPet, targetVersion: '12' }], wrong);
    await expect(run()).resolves.toBe('Failed');
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed when the new version crashes', async () => {
    const crashed = recordedAnswers(() => ({
      functionError: 'Unhandled',
      payload: { errorType: 'Runtime.ImportModuleError', errorMessage: "Error: Cannot find module 'node:https'" },
    }));
    const { run, reports } = hook([{ functionName: NAMES.authorizer, targetVersion: '3' }], crashed);
    await expect(run()).resolves.toBe('Failed');
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed when the invocation throws', async () => {
    const throttled = recordedAnswers(() => ({ throws: Object.assign(new Error('Rate Exceeded.'), { name: 'TooManyRequestsException' }) }));
    const { run, reports } = hook([{ functionName: NAMES.createPet, targetVersion: '3' }], throttled);
    await expect(run()).resolves.toBe('Failed');
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('gives up on a version that does not answer in time, and still reports Failed', async () => {
    const { run, reports, calls } = hook(
      [{ functionName: NAMES.listPets, targetVersion: '3' }],
      recordedAnswers(() => 'never'),
    );
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toHaveLength(checksFor('listPets', context('x')).length);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('runs no check it could not finish before its own timeout, and reports Failed', async () => {
    const { run, reports, calls } = hook([{ functionName: NAMES.listPets, targetVersion: '3' }], recordedAnswers(), { remainingMs: 300 });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed, invoking nothing, for a function it does not check', async () => {
    const { run, reports, calls } = hook([{ functionName: 'SomeoneElses-Function', targetVersion: '3' }]);
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed, invoking nothing, when the deployment names no published version', async () => {
    for (const targetVersion of [undefined, '$LATEST', 'live']) {
      const { run, reports, calls } = hook([{ functionName: NAMES.getPet, ...(targetVersion === undefined ? {} : { targetVersion }) }]);
      await expect(run(), String(targetVersion)).resolves.toBe('Failed');
      expect(calls).toEqual([]);
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
    }
  });

  it('knows a function CodeDeploy names by its ARN', async () => {
    const arn = `arn:aws:lambda:eu-west-1:111111111111:function:${NAMES.routeNotFound}`;
    const answers = recordedAnswers();
    const { run, calls } = hook([{ functionName: arn, targetVersion: '4' }], (call) =>
      answers({ ...call, functionName: NAMES.routeNotFound }),
    );
    await expect(run()).resolves.toBe('Succeeded');
    expect(calls.map((call) => [call.functionName, call.qualifier])).toEqual([
      [NAMES.routeNotFound, '4'],
      [NAMES.routeNotFound, '4'],
    ]);
  });

  it.each(['listDeploymentTargets', 'getDeploymentTarget'] as const)(
    'reports Failed when CodeDeploy refuses %s, so the deployment cannot move unchecked',
    async (failing) => {
      const { run, reports, calls } = hook([{ functionName: NAMES.getPet, targetVersion: '3' }], recordedAnswers(), { failing });
      await expect(run()).resolves.toBe('Failed');
      expect(calls).toEqual([]);
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
    },
  );

  it('throws when CodeDeploy refuses the report, so the failure shows: a deployment without a report cannot pass', async () => {
    const { run } = hook([{ functionName: NAMES.getPet, targetVersion: '3' }], recordedAnswers(), {
      failing: 'putLifecycleEventHookExecutionStatus',
    });
    await expect(run()).rejects.toThrow(/PutLifecycleEventHookExecutionStatus/i);
  });

  it('refuses an event CodeDeploy did not send: there is nothing to report to', async () => {
    const { run, reports, calls } = hook([{ functionName: NAMES.getPet, targetVersion: '3' }]);
    await expect(run({ DeploymentId: DEPLOYMENT })).rejects.toThrow(/LifecycleEventHookExecutionId/);
    expect(reports).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe('the pre-traffic hook, checking the authorizer with a key the keys table holds', () => {
  const AUTHORIZER: FakeTarget[] = [{ functionName: NAMES.authorizer, targetVersion: '9' }];
  const refusingEveryKey = (verdict: AuthorizerContext): AuthorizerContext =>
    verdict.outcome === 'allowed' ? { outcome: 'invalid' } : verdict;

  it('issues a key for the run, sees the new version accept it as that key, and revokes it before reporting Succeeded', async () => {
    const keys = keysTable();
    const { run, reports, calls } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys });
    await expect(run()).resolves.toBe('Succeeded');
    const [record, ...others] = keys.records();
    expect(others).toEqual([]);
    expect(record).toEqual(expect.objectContaining({ name: CHECK_KEY_NAME, revokedAt: expect.any(String) }));
    const bearer = authorizationOf(calls.at(-1)!)!.replace(/^Bearer /, '');
    expect(hashApiKey(bearer)).toBe(record!.keyHash);
    expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
  });

  it('fails a version that refuses every key, and revokes the key all the same', async () => {
    const keys = keysTable();
    const { run, reports, calls } = hook(AUTHORIZER, authorizerOver(keys.keys, refusingEveryKey), { keys });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toHaveLength(checksFor('authorizer', { ...context('x'), checkKey: { apiKey: 'k', keyId: 'k' } }).length);
    expect(keys.records()).toEqual([expect.objectContaining({ name: CHECK_KEY_NAME, revokedAt: expect.any(String) })]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('fails a version that accepts the key as another one', async () => {
    const keys = keysTable();
    const asAnother = (verdict: AuthorizerContext): AuthorizerContext =>
      verdict.outcome === 'allowed' ? { ...verdict, keyId: 'key_other' } : verdict;
    const { run } = hook(AUTHORIZER, authorizerOver(keys.keys, asAnother), { keys });
    await expect(run()).resolves.toBe('Failed');
  });

  it('revokes the key when the new version crashes or never answers', async () => {
    for (const answer of [{ functionError: 'Unhandled', payload: { errorType: 'Error', errorMessage: 'boom' } }, 'never'] as const) {
      const keys = keysTable();
      const { run } = hook(AUTHORIZER, () => answer, { keys });
      await expect(run(), JSON.stringify(answer)).resolves.toBe('Failed');
      expect(keys.records(), JSON.stringify(answer)).toEqual([expect.objectContaining({ revokedAt: expect.any(String) })]);
    }
  });

  it('leaves itself the time to revoke the key: it runs no check that would end too late for that and the report', async () => {
    const keys = keysTable();
    // Enough for a check and the report, not for the revocation as well.
    const { run, calls } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys, remainingMs: 500 });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(keys.records()).toEqual([expect.objectContaining({ revokedAt: expect.any(String) })]);
  });

  it('reports Failed, invoking nothing, when the keys table refuses the key', async () => {
    const keys = keysTable('add');
    const { run, reports, calls } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
  });

  it('reports Failed when the key cannot be revoked, even though every check passed', async () => {
    const keys = keysTable('revokeByHash');
    const { run, calls } = hook(AUTHORIZER, authorizerOver(keys.keys), { keys });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toHaveLength(3);
  });

  it('reports Failed, invoking nothing, when it has no keys table to issue the key in', async () => {
    const { run, calls } = hook(AUTHORIZER, recordedAnswers(), { keys: null });
    await expect(run()).resolves.toBe('Failed');
    expect(calls).toEqual([]);
  });

  it('issues no key for a function whose checks need none', async () => {
    const keys = keysTable();
    const { run } = hook([{ functionName: NAMES.listPets, targetVersion: '9' }], recordedAnswers(), { keys });
    await expect(run()).resolves.toBe('Succeeded');
    expect(keys.records()).toEqual([]);
  });
});
