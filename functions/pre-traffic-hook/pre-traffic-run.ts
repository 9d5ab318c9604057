import type {
  GetDeploymentTargetCommandInput,
  GetDeploymentTargetCommandOutput,
  ListDeploymentTargetsCommandInput,
  ListDeploymentTargetsCommandOutput,
  PutLifecycleEventHookExecutionStatusCommandInput,
} from '@aws-sdk/client-codedeploy';
import type { InvokeCommandInput, InvokeCommandOutput } from '@aws-sdk/client-lambda';
import * as v from 'valibot';
import { decodePayload, encodePayload, type CallOptions } from '../../shared/checks/direct-invocation';
import type { InvocationClock } from '../../shared/runtime/deadline';
import { logger } from '../../shared/runtime/logger';
import { describeError, withCheckKeys, type CheckKeyStore } from './check-keys';
import { CODEDEPLOY_CALL_LIMIT_MS } from '../../shared/facts/time-budget';
import { CHECK_ANSWER_LIMIT_MS, CHECK_KEY_CALL_LIMIT_MS, TRAFFIC_START_LIMIT_MS } from './hook-time-budget';
import {
  CHECK_KEY_SHAPES,
  CHECKED_WITH_A_KEY,
  checksFor,
  keylessChecksFor,
  needsRevoking,
  type Check,
  type CheckContext,
} from './pre-traffic-expectations';
import { answered, hookStatus, judge, judgeAgainstOld, type HookStatus, type InvocationOutcome, type Verdict } from './verdicts';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** The CodeDeploy calls the hook makes, named and shaped as the SDK's CodeDeploy client has them. */
export interface CodeDeployApi {
  listDeploymentTargets(
    input: ListDeploymentTargetsCommandInput,
    options: CallOptions,
  ): Promise<Pick<ListDeploymentTargetsCommandOutput, 'targetIds' | 'nextToken'>>;
  getDeploymentTarget(
    input: GetDeploymentTargetCommandInput,
    options: CallOptions,
  ): Promise<Pick<GetDeploymentTargetCommandOutput, 'deploymentTarget'>>;
  putLifecycleEventHookExecutionStatus(input: PutLifecycleEventHookExecutionStatusCommandInput, options: CallOptions): Promise<unknown>;
}

/** The Lambda calls the hook makes, shaped as the SDK's Lambda client has them: a check's, and the traffic run's start. */
export interface LambdaApi {
  invoke(
    input: InvokeCommandInput,
    options: CallOptions,
  ): Promise<Pick<InvokeCommandOutput, 'FunctionError'> & { Payload?: Uint8Array | undefined }>;
}

export interface HookLimits {
  /** How long a check waits for its answer. */
  readonly checkAnswerMs: number;
  /** How long one CodeDeploy call may take. */
  readonly codeDeployCallMs: number;
  /** How long issuing or revoking one check key may take: the hook leaves itself that time to revoke them. */
  readonly checkKeyCallMs: number;
  /** How long starting the deployment traffic may take. */
  readonly trafficStartMs: number;
}

export interface PreTrafficCheckDependencies {
  readonly codeDeploy: CodeDeployApi;
  readonly lambda: LambdaApi;
  /** The deployed name of each function the hook checks: nothing else is ever invoked to be checked. */
  readonly functionNames: Readonly<Record<ApiFunctionName, string>>;
  /** The function that sends a passed version's canary its traffic (DEPLOYMENT_TRAFFIC_FUNCTION), invoked asynchronously. */
  readonly trafficFunction: string;
  /** The hook invocation's remaining time. */
  readonly clock: InvocationClock;
  /** What the checks of one run use: a fresh unknown key and pet id each time. */
  readonly checkContext: (runId: string) => CheckContext;
  /** Where the keys of CHECKED_WITH_A_KEY's checks are issued; without it, their deployments fail. */
  readonly checkKeys?: CheckKeyStore;
  readonly limits?: HookLimits;
}

const DEFAULT_LIMITS: HookLimits = {
  checkAnswerMs: CHECK_ANSWER_LIMIT_MS,
  codeDeployCallMs: CODEDEPLOY_CALL_LIMIT_MS,
  checkKeyCallMs: CHECK_KEY_CALL_LIMIT_MS,
  trafficStartMs: TRAFFIC_START_LIMIT_MS,
};

/** What CodeDeploy hands a lifecycle hook: the two ids its report must carry. */
const HookEventSchema = v.object({
  DeploymentId: v.pipe(v.string(), v.nonEmpty()),
  LifecycleEventHookExecutionId: v.pipe(v.string(), v.nonEmpty()),
});

/** One function a deployment moves: the version its alias moves to, and the one it serves now. */
interface DeploymentTarget {
  readonly functionName: string | undefined;
  readonly version: string | undefined;
  readonly currentVersion: string | undefined;
}

/** What the checks of a deployment found: a verdict per check, and each function whose new version passed all of its own. */
interface DeploymentVerdicts {
  readonly verdicts: Verdict[];
  readonly passed: ApiFunctionName[];
}

/**
 * CodeDeploy's BeforeAllowTraffic hook: invokes the version a deployment is about to move traffic to
 * with each check of its function (pre-traffic-expectations.ts), judged against the version serving now,
 * and reports Succeeded only when no check fails the new version; anything else, an exception included,
 * is Failed and rolls the deployment back. Only a report CodeDeploy refuses is thrown, since a deployment
 * without a report cannot pass. Once Succeeded is reported, it starts the deployment traffic.
 */
export async function runPreTrafficChecks(event: unknown, dependencies: PreTrafficCheckDependencies): Promise<HookStatus> {
  const parsed = v.safeParse(HookEventSchema, event);
  // Nothing to report to: CodeDeploy did not send this.
  if (!parsed.success)
    throw new Error('Not a CodeDeploy lifecycle hook event: DeploymentId and LifecycleEventHookExecutionId are required.');
  const { DeploymentId: deploymentId, LifecycleEventHookExecutionId: lifecycleEventHookExecutionId } = parsed.output;
  const limits = dependencies.limits ?? DEFAULT_LIMITS;
  logger.appendKeys({ deploymentId });

  let status: HookStatus = 'Failed';
  let checked: DeploymentVerdicts = { verdicts: [], passed: [] };
  try {
    checked = await checkDeployment(deploymentId, dependencies, limits);
    status = hookStatus(checked.verdicts);
  } catch (error) {
    logger.error('The pre-traffic checks could not run', error instanceof Error ? error : String(error));
  }
  await dependencies.codeDeploy.putLifecycleEventHookExecutionStatus(
    { deploymentId, lifecycleEventHookExecutionId, status },
    { abortSignal: AbortSignal.timeout(limits.codeDeployCallMs) },
  );
  if (status === 'Failed') {
    logger.error('Reported Failed: CodeDeploy rolls the deployment back', { status });
    return status;
  }
  const excused = checked.verdicts.filter((verdict) => verdict.excused).map((verdict) => verdict.check);
  logger.info('Reported Succeeded: the new version may take traffic', { status, ...(excused.length > 0 ? { excused } : {}) });
  for (const fn of checked.passed) await startTraffic(deploymentId, fn, dependencies, limits);
  return status;
}

/**
 * Starts the traffic run that sends the new version's canary representative requests until the deployment
 * ends (DEPLOYMENT_TRAFFIC_FUNCTION), asynchronously: Lambda queues the event and the hook does not wait for
 * the run. A run that does not start is an ERROR but fails nothing: the version passed its checks, and the
 * rollback alarms still judge it on the traffic it gets, clients' included.
 */
async function startTraffic(
  deploymentId: string,
  fn: ApiFunctionName,
  dependencies: PreTrafficCheckDependencies,
  limits: HookLimits,
): Promise<void> {
  const entry = { function: fn, trafficFunction: dependencies.trafficFunction };
  try {
    await dependencies.lambda.invoke(
      {
        FunctionName: dependencies.trafficFunction,
        InvocationType: 'Event',
        Payload: encodePayload({ deploymentId, function: fn }),
      },
      { abortSignal: AbortSignal.timeout(limits.trafficStartMs) },
    );
    logger.info('Started the deployment traffic', entry);
  } catch (error) {
    logger.error('The deployment traffic did not start: only clients and the probe reach the new version', {
      ...entry,
      error: describeError(error),
    });
  }
}

async function checkDeployment(
  deploymentId: string,
  dependencies: PreTrafficCheckDependencies,
  limits: HookLimits,
): Promise<DeploymentVerdicts> {
  const checkedBy = new Map(Object.entries(dependencies.functionNames).map(([fn, name]) => [name, fn as ApiFunctionName]));
  const targets = await deploymentTargets(deploymentId, dependencies.codeDeploy, limits);
  if (targets.length === 0) return { verdicts: [refusal('the deployment names no Lambda function')], passed: [] };
  // After the checks of a target: the report, and the start of each target's traffic run.
  const reportMs = limits.codeDeployCallMs + targets.length * limits.trafficStartMs;

  const verdicts: Verdict[] = [];
  const passed: ApiFunctionName[] = [];
  for (const target of targets) {
    const functionName = nameOf(target.functionName);
    const fn = checkedBy.get(functionName);
    if (fn === undefined) {
      verdicts.push(refusal(`${functionName} is not a function this hook checks`));
      continue;
    }
    // A published version, never $LATEST or an alias: the checks must reach exactly what will take traffic.
    if (!isPublishedVersion(target.version)) {
      verdicts.push(refusal(`the deployment of ${fn} names no published version (${target.version ?? 'none'})`));
      continue;
    }
    // The version serving now, to judge against; none to compare with when it is not another published version.
    const oldVersion =
      isPublishedVersion(target.currentVersion) && target.currentVersion !== target.version ? target.currentVersion : undefined;
    const checked: CheckedVersion = { fn, functionName, version: target.version, oldVersion };
    logger.info('Checking the new version', { function: fn, functionName, version: checked.version, oldVersion: oldVersion ?? 'none' });
    const context = dependencies.checkContext(`pre-traffic-${deploymentId}`);
    const run = (checks: Check[], afterMs: number) => runChecks(checked, checks, dependencies, limits, afterMs + reportMs);
    // Left for the revocations once the checks end.
    const revokingMs = CHECK_KEY_SHAPES.filter(needsRevoking).length * limits.checkKeyCallMs;
    const own = !CHECKED_WITH_A_KEY.has(fn)
      ? await run(checksFor(fn, context), 0)
      : await withCheckKeys(dependencies.checkKeys, dependencies.clock, {
          keyless: () => run(keylessChecksFor(fn, context), revokingMs),
          all: (checkKeys) => run(checksFor(fn, { ...context, checkKeys }), revokingMs),
        });
    verdicts.push(...own);
    if (hookStatus(own) === 'Succeeded') passed.push(fn);
  }
  return { verdicts, passed };
}

/** A version number Lambda published, never $LATEST nor an alias. */
function isPublishedVersion(version: string | undefined): version is string {
  return version !== undefined && /^[1-9]\d*$/.test(version);
}

/** One version to check: the function by its role and its deployed name, the version a deployment moves to, and the one it moves from. */
interface CheckedVersion {
  readonly fn: ApiFunctionName;
  readonly functionName: string;
  readonly version: string;
  /** The version serving now, which a check the new version fails is asked too; none to judge against. */
  readonly oldVersion: string | undefined;
}

/**
 * Invokes the new version with each check, in order, and judges the answers; when a check fails, asks the
 * old version the same, and the check fails the new version only if the old one does not fail it the same
 * way (judgeAgainstOld). No invocation starts that could not end before the hook's own time left for
 * `afterMs` (revocations, the report, the traffic start): a check not run fails, an old version not asked
 * leaves the new version judged alone.
 */
async function runChecks(
  { fn, functionName, version, oldVersion }: CheckedVersion,
  checks: Check[],
  dependencies: PreTrafficCheckDependencies,
  limits: HookLimits,
  afterMs: number,
): Promise<Verdict[]> {
  const ask = (qualifier: string, check: Check): Promise<InvocationOutcome> =>
    dependencies.clock.getRemainingTimeInMillis() < limits.checkAnswerMs + afterMs
      ? Promise.resolve({ kind: 'no-answer', reason: 'not run: the hook would have had no time left to report' })
      : invokeVersion(dependencies.lambda, functionName, qualifier, check.event, limits.checkAnswerMs);

  const verdicts: Verdict[] = [];
  for (const check of checks) {
    const onNew = await ask(version, check);
    let verdict = judge(check, onNew);
    if (!verdict.passed && oldVersion !== undefined && answered(onNew)) {
      verdict = judgeAgainstOld(check, onNew, { version: oldVersion, outcome: await ask(oldVersion, check) });
    }
    const entry = { function: fn, version, check: verdict.check, detail: verdict.detail };
    if (verdict.excused) logger.warn('Check excused', { ...entry, oldVersion });
    else if (verdict.passed) logger.info('Check passed', entry);
    else logger.error('Check failed', entry);
    verdicts.push(verdict);
  }
  return verdicts;
}

/** The deployment's targets: for a Lambda deployment, the function, the version its alias moves to and the one it moves from. */
async function deploymentTargets(deploymentId: string, codeDeploy: CodeDeployApi, limits: HookLimits): Promise<DeploymentTarget[]> {
  const call = () => ({ abortSignal: AbortSignal.timeout(limits.codeDeployCallMs) });
  const targetIds: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await codeDeploy.listDeploymentTargets({ deploymentId, ...(nextToken === undefined ? {} : { nextToken }) }, call());
    targetIds.push(...(page.targetIds ?? []));
    nextToken = page.nextToken;
  } while (nextToken);

  const targets: DeploymentTarget[] = [];
  for (const targetId of targetIds) {
    const { deploymentTarget } = await codeDeploy.getDeploymentTarget({ deploymentId, targetId }, call());
    const info = deploymentTarget?.lambdaTarget?.lambdaFunctionInfo;
    targets.push({ functionName: info?.functionName ?? targetId, version: info?.targetVersion, currentVersion: info?.currentVersion });
  }
  return targets;
}

/** A function's name, whether CodeDeploy gives its name or its ARN. */
function nameOf(functionName: string | undefined): string {
  const arn = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)/.exec(functionName ?? '');
  return arn ? arn[1]! : (functionName ?? '');
}

function refusal(detail: string): Verdict {
  return { check: 'finds the new version of a function it checks', passed: false, detail };
}

/** Invokes one published version with one check's event and says what came back. */
async function invokeVersion(
  lambda: LambdaApi,
  functionName: string,
  version: string,
  event: unknown,
  limitMs: number,
): Promise<InvocationOutcome> {
  let answer: Awaited<ReturnType<LambdaApi['invoke']>>;
  try {
    answer = await lambda.invoke(
      { FunctionName: functionName, Qualifier: version, InvocationType: 'RequestResponse', Payload: encodePayload(event) },
      { abortSignal: AbortSignal.timeout(limitMs) },
    );
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'AbortError' || name === 'TimeoutError') return { kind: 'no-answer', reason: `nothing within ${limitMs} ms` };
    return { kind: 'no-answer', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  const { text, value: payload } = decodePayload(answer.Payload);
  if (answer.FunctionError !== undefined) {
    // Lambda's error payload: {"errorType": "...", "errorMessage": "..."}; a timeout is Sandbox.Timedout.
    const error = v.safeParse(v.object({ errorType: v.string(), errorMessage: v.string() }), payload);
    return error.success
      ? { kind: 'function-error', ...error.output }
      : { kind: 'function-error', errorType: answer.FunctionError, errorMessage: text };
  }
  return { kind: 'returned', payload };
}
