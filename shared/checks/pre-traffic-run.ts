import type {
  GetDeploymentTargetCommandInput,
  GetDeploymentTargetCommandOutput,
  ListDeploymentTargetsCommandInput,
  ListDeploymentTargetsCommandOutput,
  PutLifecycleEventHookExecutionStatusCommandInput,
} from '@aws-sdk/client-codedeploy';
import type { InvokeCommandInput, InvokeCommandOutput } from '@aws-sdk/client-lambda';
import * as v from 'valibot';
import type { InvocationClock } from '../runtime/deadline';
import { logger } from '../runtime/logger';
import { CODEDEPLOY_CALL_LIMIT_MS, CHECK_ANSWER_LIMIT_MS } from './hook-time-budget';
import { checksFor, type CheckedFunction, type CheckContext } from './pre-traffic-expectations';
import { hookStatus, judge, type HookStatus, type InvocationOutcome, type Verdict } from './verdicts';

/** Options of every call: each is bounded, so the hook always has time left to report. */
export interface CallOptions {
  readonly abortSignal: AbortSignal;
}

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

/** The Lambda call the hook makes, shaped as the SDK's Lambda client has it. */
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
}

export interface PreTrafficCheckDependencies {
  readonly codeDeploy: CodeDeployApi;
  readonly lambda: LambdaApi;
  /** The deployed name of each function the hook checks: nothing else is ever invoked. */
  readonly functionNames: Readonly<Record<CheckedFunction, string>>;
  /** The hook invocation's remaining time. */
  readonly clock: InvocationClock;
  /** What the checks of one run use: a fresh unknown key and pet id each time. */
  readonly checkContext: (runId: string) => CheckContext;
  readonly limits?: HookLimits;
}

const DEFAULT_LIMITS: HookLimits = { checkAnswerMs: CHECK_ANSWER_LIMIT_MS, codeDeployCallMs: CODEDEPLOY_CALL_LIMIT_MS };

/** What CodeDeploy hands a lifecycle hook: the two ids its report must carry. */
const HookEventSchema = v.object({
  DeploymentId: v.pipe(v.string(), v.nonEmpty()),
  LifecycleEventHookExecutionId: v.pipe(v.string(), v.nonEmpty()),
});

/** One function a deployment moves, and the version it moves the function's alias to. */
interface DeploymentTarget {
  readonly functionName: string | undefined;
  readonly version: string | undefined;
}

/**
 * CodeDeploy's BeforeAllowTraffic hook: invokes the version a deployment is about to move traffic to
 * with each check of its function (pre-traffic-expectations.ts) and reports Succeeded only when every
 * answer is right; anything else, an exception included, is Failed and rolls the deployment back.
 * Only a report CodeDeploy refuses is thrown, since a deployment without a report cannot pass.
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
  try {
    status = hookStatus(await checkDeployment(deploymentId, dependencies, limits));
  } catch (error) {
    logger.error('The pre-traffic checks could not run', error instanceof Error ? error : String(error));
  }
  await dependencies.codeDeploy.putLifecycleEventHookExecutionStatus(
    { deploymentId, lifecycleEventHookExecutionId, status },
    { abortSignal: AbortSignal.timeout(limits.codeDeployCallMs) },
  );
  if (status === 'Succeeded') logger.info('Reported Succeeded: the new version may take traffic', { status });
  else logger.error('Reported Failed: CodeDeploy rolls the deployment back', { status });
  return status;
}

async function checkDeployment(deploymentId: string, dependencies: PreTrafficCheckDependencies, limits: HookLimits): Promise<Verdict[]> {
  const checkedBy = new Map(Object.entries(dependencies.functionNames).map(([fn, name]) => [name, fn as CheckedFunction]));
  const targets = await deploymentTargets(deploymentId, dependencies.codeDeploy, limits);
  if (targets.length === 0) return [refusal('the deployment names no Lambda function')];

  const verdicts: Verdict[] = [];
  for (const target of targets) {
    const functionName = nameOf(target.functionName);
    const fn = checkedBy.get(functionName);
    if (fn === undefined) {
      verdicts.push(refusal(`${functionName} is not a function this hook checks`));
      continue;
    }
    // A published version, never $LATEST or an alias: the checks must reach exactly what will take traffic.
    if (target.version === undefined || !/^[1-9]\d*$/.test(target.version)) {
      verdicts.push(refusal(`the deployment of ${fn} names no published version (${target.version ?? 'none'})`));
      continue;
    }
    const version = target.version;
    logger.info('Checking the new version', { function: fn, functionName, version });
    for (const check of checksFor(fn, dependencies.checkContext(`pre-traffic-${deploymentId}`))) {
      const outcome: InvocationOutcome =
        dependencies.clock.getRemainingTimeInMillis() < limits.checkAnswerMs + limits.codeDeployCallMs
          ? { kind: 'no-answer', reason: 'not run: the hook would have had no time left to report' }
          : await invokeVersion(dependencies.lambda, functionName, version, check.event, limits.checkAnswerMs);
      const verdict = judge(check, outcome);
      const entry = { function: fn, version, check: verdict.check, detail: verdict.detail };
      if (verdict.passed) logger.info('Check passed', entry);
      else logger.error('Check failed', entry);
      verdicts.push(verdict);
    }
  }
  return verdicts;
}

/** The deployment's targets: for a Lambda deployment, the function and the version its alias moves to. */
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
    targets.push({ functionName: info?.functionName ?? targetId, version: info?.targetVersion });
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

const encoder = new TextEncoder();
const decoder = new TextDecoder();

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
      { FunctionName: functionName, Qualifier: version, InvocationType: 'RequestResponse', Payload: encoder.encode(JSON.stringify(event)) },
      { abortSignal: AbortSignal.timeout(limitMs) },
    );
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'AbortError' || name === 'TimeoutError') return { kind: 'no-answer', reason: `nothing within ${limitMs} ms` };
    return { kind: 'no-answer', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  const text = answer.Payload === undefined ? '' : decoder.decode(answer.Payload);
  const payload = parseJson(text);
  if (answer.FunctionError !== undefined) {
    // Lambda's error payload: {"errorType": "...", "errorMessage": "..."}; a timeout is Sandbox.Timedout.
    const error = v.safeParse(v.object({ errorType: v.string(), errorMessage: v.string() }), payload);
    return error.success
      ? { kind: 'function-error', ...error.output }
      : { kind: 'function-error', errorType: answer.FunctionError, errorMessage: text };
  }
  return { kind: 'returned', payload };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
