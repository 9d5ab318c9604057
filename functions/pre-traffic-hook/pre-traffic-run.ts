import type {
  GetDeploymentTargetCommandInput,
  GetDeploymentTargetCommandOutput,
  ListDeploymentTargetsCommandInput,
  ListDeploymentTargetsCommandOutput,
  PutLifecycleEventHookExecutionStatusCommandInput,
} from '@aws-sdk/client-codedeploy';
import type { InvokeCommandInput, InvokeCommandOutput } from '@aws-sdk/client-lambda';
import * as v from 'valibot';
import type { ApiKeyRecord, ApiKeyStore } from '../../shared/domain/auth/api-key-store';
import { generateApiKey, generateKeyId, hashApiKey } from '../../shared/domain/auth/api-keys';
import type { InvocationClock } from '../../shared/runtime/deadline';
import { logger } from '../../shared/runtime/logger';
import { CHECK_ANSWER_LIMIT_MS, CHECK_KEY_CALL_LIMIT_MS, CODEDEPLOY_CALL_LIMIT_MS } from './hook-time-budget';
import { CHECKED_WITH_A_KEY, checksFor, type CheckContext, type CheckKey } from './pre-traffic-expectations';
import { hookStatus, judge, type HookStatus, type InvocationOutcome, type Verdict } from './verdicts';
import type { ApiFunctionName } from '../../shared/facts/function-names';

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

/**
 * Where the hook keeps the key its checks need: the stage's API keys table, through the one store of it
 * (shared/dynamodb/dynamo-api-key-store.ts), so the authorizer reads the record as any client's. Each call
 * ends by itself within CHECK_KEY_CALL_LIMIT_MS.
 */
export type CheckKeyStore = Pick<ApiKeyStore, 'add' | 'revokeByHash'>;

export interface HookLimits {
  /** How long a check waits for its answer. */
  readonly checkAnswerMs: number;
  /** How long one CodeDeploy call may take. */
  readonly codeDeployCallMs: number;
  /** How long issuing or revoking the check key may take: the hook leaves itself that time to revoke it. */
  readonly checkKeyCallMs: number;
}

export interface PreTrafficCheckDependencies {
  readonly codeDeploy: CodeDeployApi;
  readonly lambda: LambdaApi;
  /** The deployed name of each function the hook checks: nothing else is ever invoked. */
  readonly functionNames: Readonly<Record<ApiFunctionName, string>>;
  /** The hook invocation's remaining time. */
  readonly clock: InvocationClock;
  /** What the checks of one run use: a fresh unknown key and pet id each time. */
  readonly checkContext: (runId: string) => CheckContext;
  /** Where the key of CHECKED_WITH_A_KEY's checks is issued; without it, their deployments fail. */
  readonly checkKeys?: CheckKeyStore;
  readonly limits?: HookLimits;
}

const DEFAULT_LIMITS: HookLimits = {
  checkAnswerMs: CHECK_ANSWER_LIMIT_MS,
  codeDeployCallMs: CODEDEPLOY_CALL_LIMIT_MS,
  checkKeyCallMs: CHECK_KEY_CALL_LIMIT_MS,
};

/** The name check keys are issued under, which tells them from clients' keys in `npm run keys -- list`. */
export const CHECK_KEY_NAME = 'pre-traffic-check';

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
  const checkedBy = new Map(Object.entries(dependencies.functionNames).map(([fn, name]) => [name, fn as ApiFunctionName]));
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
    const checked: CheckedVersion = { fn, functionName, version: target.version };
    logger.info('Checking the new version', { function: fn, functionName, version: checked.version });
    const context = dependencies.checkContext(`pre-traffic-${deploymentId}`);
    if (!CHECKED_WITH_A_KEY.has(fn)) verdicts.push(...(await runChecks(checked, context, dependencies, limits, 0)));
    else {
      const run = (checkKey: CheckKey) => runChecks(checked, { ...context, checkKey }, dependencies, limits, limits.checkKeyCallMs);
      verdicts.push(...(await withCheckKey(dependencies.checkKeys, dependencies.clock, run)));
    }
  }
  return verdicts;
}

/** One version to check: the function by its role and its deployed name, and the version a deployment moves to. */
interface CheckedVersion {
  readonly fn: ApiFunctionName;
  readonly functionName: string;
  readonly version: string;
}

/**
 * Invokes the version with each check of its function, in order, and judges the answers. A check that
 * could not end before the hook's own time left for `afterMs` (a revocation) and the report is not run.
 */
async function runChecks(
  { fn, functionName, version }: CheckedVersion,
  context: CheckContext,
  dependencies: PreTrafficCheckDependencies,
  limits: HookLimits,
  afterMs: number,
): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const check of checksFor(fn, context)) {
    const outcome: InvocationOutcome =
      dependencies.clock.getRemainingTimeInMillis() < limits.checkAnswerMs + afterMs + limits.codeDeployCallMs
        ? { kind: 'no-answer', reason: 'not run: the hook would have had no time left to report' }
        : await invokeVersion(dependencies.lambda, functionName, version, check.event, limits.checkAnswerMs);
    const verdict = judge(check, outcome);
    const entry = { function: fn, version, check: verdict.check, detail: verdict.detail };
    if (verdict.passed) logger.info('Check passed', entry);
    else logger.error('Check failed', entry);
    verdicts.push(verdict);
  }
  return verdicts;
}

/**
 * Runs `check` with a key issued for it alone, which expires by itself when the hook's invocation ends, and
 * revokes the key afterwards whatever happened, an issue that seemed to fail included. The key itself is
 * never logged; its id is, before it is written. Not getting a key, or not revoking it, fails the run,
 * since a deployment must not pass unchecked nor leave a working key behind.
 */
async function withCheckKey(
  store: CheckKeyStore | undefined,
  clock: InvocationClock,
  check: (checkKey: CheckKey) => Promise<Verdict[]>,
): Promise<Verdict[]> {
  if (store === undefined) return [keyVerdict('issues a check key', false, 'the hook was given no keys table to issue it in')];
  const apiKey = generateApiKey();
  const now = Date.now();
  const record: ApiKeyRecord = {
    keyId: generateKeyId(),
    keyHash: hashApiKey(apiKey),
    name: CHECK_KEY_NAME,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + clock.getRemainingTimeInMillis()).toISOString(),
  };
  logger.info('Issuing a check key', { keyId: record.keyId, expiresAt: record.expiresAt });

  let verdicts: Verdict[] = [];
  try {
    const refusal = await issueCheckKey(store, record);
    verdicts = refusal === undefined ? await check({ apiKey, keyId: record.keyId }) : [refusal];
  } finally {
    verdicts = [...verdicts, await revokeCheckKey(store, record)];
  }
  return verdicts;
}

/** Stores the check key's record; the verdict that fails the run when the keys table refused it. */
async function issueCheckKey(store: CheckKeyStore, record: ApiKeyRecord): Promise<Verdict | undefined> {
  try {
    await store.add(record);
    return undefined;
  } catch (error) {
    // Refused as its own earlier write, the key was issued all the same: only the answer was lost.
    if (isOwnEarlierWrite(error)) return undefined;
    return keyVerdict('issues a check key', false, `the keys table refused it: ${describeError(error)}`);
  }
}

/**
 * The SDK retried a put whose answer was lost, and the retry met the first attempt's record: no other
 * record can hold a hash of 256 random bits, so a refused put of a fresh key is its own earlier write.
 */
function isOwnEarlierWrite(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** Revokes the run's check key, and says whether it did; a key that was never stored needs no revoking. */
async function revokeCheckKey(store: CheckKeyStore, record: ApiKeyRecord): Promise<Verdict> {
  try {
    const revoked = await store.revokeByHash(record.keyHash, new Date());
    return keyVerdict('revokes its check key', true, revoked ? `revoked ${record.keyId}` : `${record.keyId} was never stored`);
  } catch (error) {
    const detail = `${record.keyId} is still active until it expires at ${record.expiresAt}, or revoke it with npm run keys: ${describeError(error)}`;
    return keyVerdict('revokes its check key', false, detail);
  }
}

function keyVerdict(check: string, passed: boolean, detail: string): Verdict {
  if (passed) logger.info('Check passed', { check, detail });
  else logger.error('Check failed', { check, detail });
  return { check, passed, detail };
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
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
