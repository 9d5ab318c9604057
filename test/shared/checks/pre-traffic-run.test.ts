import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { runPreTrafficChecks, type CodeDeployApi, type PreTrafficCheckDependencies } from '../../../shared/checks/pre-traffic-run';
import { CHECKED_FUNCTIONS, checksFor, type CheckedFunction } from '../../../shared/checks/pre-traffic-expectations';
import { fakeCodeDeploy, fakeLambda, type FakeAnswer, type FakeTarget, type InvokeCall } from '../../helpers/fake-codedeploy';

/** The staging bundles' answers to each check (see verdicts.test.ts). */
const RECORDED: Record<CheckedFunction, unknown[]> = JSON.parse(
  readFileSync(join(PROJECT_ROOT, 'test', 'fixtures', 'pre-traffic-answers.json'), 'utf8'),
);

const DEPLOYMENT = 'd-EXAMPLE11';
const EXECUTION = 'hook-execution-1';
const EVENT = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: EXECUTION };

/** The deployed name of each function, as the hook's configuration gives them. */
const NAMES = Object.fromEntries(CHECKED_FUNCTIONS.map((fn) => [fn, `AnimalStore-Staging-${fn}-A1B2C3`])) as Record<
  CheckedFunction,
  string
>;
const FUNCTION_OF = new Map(Object.entries(NAMES).map(([fn, name]) => [name, fn as CheckedFunction]));

const NOW = new Date('2026-11-25T12:00:00Z');
const context = (runId: string) => ({ runId, unknownApiKey: 'pets_an-unknown-key', unknownPetId: 12_345, now: NOW });

/** Each function answers its checks as the recorded bundles did, in order. */
function recordedAnswers(override: (fn: CheckedFunction, index: number) => FakeAnswer | undefined = () => undefined) {
  const answered = new Map<CheckedFunction, number>();
  return (call: InvokeCall): FakeAnswer => {
    const fn = FUNCTION_OF.get(call.functionName ?? '')!;
    const index = answered.get(fn) ?? 0;
    answered.set(fn, index + 1);
    return override(fn, index) ?? { payload: RECORDED[fn][index] };
  };
}

function hook(targets: FakeTarget[], answers = recordedAnswers(), options: { failing?: keyof CodeDeployApi; remainingMs?: number } = {}) {
  const codeDeploy = fakeCodeDeploy(DEPLOYMENT, targets, options.failing === undefined ? {} : { failing: options.failing });
  const lambda = fakeLambda(answers);
  const dependencies: PreTrafficCheckDependencies = {
    codeDeploy: codeDeploy.api,
    lambda: lambda.api,
    functionNames: NAMES,
    clock: { getRemainingTimeInMillis: () => options.remainingMs ?? 85_000 },
    checkContext: context,
    limits: { checkAnswerMs: 200, codeDeployCallMs: 200 },
  };
  return { run: (event: unknown = EVENT) => runPreTrafficChecks(event, dependencies), reports: codeDeploy.reports, calls: lambda.calls };
}

describe('the pre-traffic hook', () => {
  it.each(CHECKED_FUNCTIONS)('invokes the version of %s being deployed with each of its checks, and reports Succeeded', async (fn) => {
    const { run, reports, calls } = hook([{ functionName: NAMES[fn], targetVersion: '7' }]);
    await expect(run()).resolves.toBe('Succeeded');
    const checks = checksFor(fn, context(`pre-traffic-${DEPLOYMENT}`));
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
