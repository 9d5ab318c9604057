import type { PutLifecycleEventHookExecutionStatusCommandInput } from '@aws-sdk/client-codedeploy';
import type { InvokeCommandInput, InvokeCommandOutput } from '@aws-sdk/client-lambda';
import * as v from 'valibot';
import { decodePayload, encodePayload, type CallOptions } from '../../shared/checks/direct-invocation';
import { BAKE_MINUTES, TRAFFIC_INTERVAL_MS } from '../../shared/facts/deployment';
import { API_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';
import { CODEDEPLOY_CALL_LIMIT_MS, DIRECT_INVOCATION_LIMIT_MS } from '../../shared/facts/time-budget';
import type { InvocationClock } from '../../shared/runtime/deadline';
import { JUDGED_VERDICT_STATUSES } from '../../shared/domain/auth/authorizer-context';
import { logger } from '../../shared/runtime/logger';
import { countAuthorizerAnswer } from '../../shared/runtime/metrics';
import { PET_IDS_LISTING, trafficRequest, type TrafficContext } from './traffic-requests';

/** The CodeDeploy calls the run makes, shaped as the SDK's CodeDeploy client has them. */
export interface DeploymentApi {
  getDeployment(
    input: { deploymentId: string },
    options: CallOptions,
  ): Promise<{ deploymentInfo?: { status?: string | undefined; deploymentConfigName?: string | undefined } | undefined }>;
  putLifecycleEventHookExecutionStatus(input: PutLifecycleEventHookExecutionStatusCommandInput, options: CallOptions): Promise<unknown>;
}

/** The Lambda call the run makes, shaped as the SDK's Lambda client has it. */
export interface TrafficLambdaApi {
  invoke(
    input: InvokeCommandInput,
    options: CallOptions,
  ): Promise<Pick<InvokeCommandOutput, 'FunctionError' | 'ExecutedVersion'> & { Payload?: Uint8Array | undefined }>;
}

export interface DeploymentTrafficDependencies {
  readonly codeDeploy: DeploymentApi;
  readonly lambda: TrafficLambdaApi;
  /** Each function behind the API's deployed name: only their `live` aliases are ever invoked. */
  readonly functionNames: Readonly<Record<ApiFunctionName, string>>;
  /** The invocation's remaining time. */
  readonly clock: InvocationClock;
  /** Resolves after `ms`: the pause between two requests, and the bake's. */
  readonly wait: (ms: number) => Promise<void>;
  readonly now: () => number;
  /** A fresh key no table holds and a pet id no pet has, for each run. */
  readonly unknownApiKey: string;
  readonly unknownPetId: number;
}

/** What the pre-traffic hook hands a traffic run once a function's new version passed its checks. */
const TrafficEventSchema = v.object({ deploymentId: v.pipe(v.string(), v.nonEmpty()), function: v.picklist(API_FUNCTIONS) });
export type TrafficEvent = v.InferOutput<typeof TrafficEventSchema>;

/** What CodeDeploy hands its AfterAllowTraffic hook: the bake. */
const BakeEventSchema = v.object({
  DeploymentId: v.pipe(v.string(), v.nonEmpty()),
  LifecycleEventHookExecutionId: v.pipe(v.string(), v.nonEmpty()),
});

/** A deployment in one of these has ended: nothing is judged any more. */
const ENDED = new Set(['Succeeded', 'Failed', 'Stopped']);

/** How an emergency release deploys (infra/animal-store-stack.ts): its groups poll no alarm, so there is nothing to bake. */
const ALL_AT_ONCE = 'CodeDeployDefault.LambdaAllAtOnce';

/** How often a run asks whether its deployment has ended. */
export const STATUS_EVERY_MS = 15_000;
/** What a run keeps of its time to end by itself: a request at its limit, then its last line. */
const END_RESERVE_MS = DIRECT_INVOCATION_LIMIT_MS + 5_000;

/**
 * The deployment traffic function's two jobs, by what invoked it: the pre-traffic hook, to send a function's
 * new version requests for as long as its deployment lasts, or CodeDeploy, to bake.
 */
export async function runDeploymentTraffic(event: unknown, dependencies: DeploymentTrafficDependencies): Promise<void> {
  const bake = v.safeParse(BakeEventSchema, event);
  if (bake.success) return runBake(bake.output.DeploymentId, bake.output.LifecycleEventHookExecutionId, dependencies);
  const traffic = v.safeParse(TrafficEventSchema, event);
  if (!traffic.success)
    throw new Error('Neither a CodeDeploy lifecycle hook event nor a traffic run: {deploymentId, function} is required.');
  return sendTraffic(traffic.output, dependencies);
}

/**
 * Sends the function's `live` alias one request every TRAFFIC_INTERVAL_MS until its deployment ends, so the new
 * version serves enough requests to be judged against the old one even on a stage no client calls. Its log
 * ends with every answer counted by the version that gave it.
 */
async function sendTraffic({ deploymentId, function: fn }: TrafficEvent, dependencies: DeploymentTrafficDependencies): Promise<void> {
  const { clock, now, wait } = dependencies;
  logger.appendKeys({ deploymentId, function: fn });
  const functionName = dependencies.functionNames[fn];
  const context: TrafficContext = {
    runId: `deployment-traffic-${deploymentId}`,
    unknownApiKey: dependencies.unknownApiKey,
    unknownPetId: dependencies.unknownPetId,
    petIds: fn === 'getPet' ? await storedPetIds(dependencies) : [],
    now: new Date(now()),
  };
  logger.info('Sending the deployment traffic', { functionName, pets: context.petIds.length });

  const answers = new Map<string, number>();
  let sent = 0;
  let nextStatusAt = now();
  let ended = 'its own time ran out';
  while (clock.getRemainingTimeInMillis() > END_RESERVE_MS) {
    if (now() >= nextStatusAt) {
      const { status } = await deploymentOf(dependencies.codeDeploy, deploymentId);
      if (status !== undefined && ENDED.has(status)) {
        ended = `the deployment ${status.toLowerCase()}`;
        break;
      }
      nextStatusAt = now() + STATUS_EVERY_MS;
    }
    const started = now();
    const index = sent++;
    const request = trafficRequest(fn, index, { ...context, now: new Date(started) });
    const answer = await invokeLive(dependencies.lambda, functionName, request, `${context.runId}-${index}`);
    answers.set(answer, (answers.get(answer) ?? 0) + 1);
    await wait(Math.max(0, TRAFFIC_INTERVAL_MS - (now() - started)));
  }
  logger.info('The deployment traffic ended', { reason: ended, requests: sent, answers: Object.fromEntries(answers) });
}

/**
 * CodeDeploy's AfterAllowTraffic hook: holds the deployment open for BAKE_MINUTES after the shift, while the
 * rollback alarms judge the new version alone, then lets it succeed. A deployment that ended meanwhile (an
 * alarm rolled it back) gets no report.
 */
async function runBake(
  deploymentId: string,
  lifecycleEventHookExecutionId: string,
  dependencies: DeploymentTrafficDependencies,
): Promise<void> {
  const { clock, now, wait } = dependencies;
  logger.appendKeys({ deploymentId });
  const bakeEndsAt = now() + BAKE_MINUTES * 60_000;
  // The same hook serves both kinds of release, so going back from an emergency one moves no function.
  if ((await deploymentOf(dependencies.codeDeploy, deploymentId)).deploymentConfigName === ALL_AT_ONCE) {
    logger.info('An emergency release polls no alarm: nothing to bake');
  } else {
    logger.info('Baking', { minutes: BAKE_MINUTES });
    while (now() < bakeEndsAt && clock.getRemainingTimeInMillis() > END_RESERVE_MS) {
      await wait(Math.min(STATUS_EVERY_MS, bakeEndsAt - now()));
      const { status } = await deploymentOf(dependencies.codeDeploy, deploymentId);
      if (status !== undefined && ENDED.has(status)) {
        logger.warn('The deployment ended during the bake: nothing to report', { status });
        return;
      }
    }
  }
  await dependencies.codeDeploy.putLifecycleEventHookExecutionStatus(
    { deploymentId, lifecycleEventHookExecutionId, status: 'Succeeded' },
    { abortSignal: AbortSignal.timeout(CODEDEPLOY_CALL_LIMIT_MS) },
  );
  logger.info('Reported Succeeded: the deployment may end');
}

/** The deployment's status and configuration, or neither when CodeDeploy did not say: a run goes on, bounded by its own timeout. */
async function deploymentOf(
  codeDeploy: DeploymentApi,
  deploymentId: string,
): Promise<{ status?: string | undefined; deploymentConfigName?: string | undefined }> {
  try {
    const { deploymentInfo } = await codeDeploy.getDeployment(
      { deploymentId },
      { abortSignal: AbortSignal.timeout(CODEDEPLOY_CALL_LIMIT_MS) },
    );
    return deploymentInfo ?? {};
  } catch (error) {
    logger.warn('Could not read the deployment', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    return {};
  }
}

/** The ids of the newest stored pets, through listPets' `live` alias as any client reads them; none when it does not answer a list. */
async function storedPetIds(dependencies: DeploymentTrafficDependencies): Promise<number[]> {
  const { lambda, functionNames, now } = dependencies;
  const event = trafficRequest('listPets', 1, {
    runId: 'deployment-traffic-pets',
    unknownApiKey: dependencies.unknownApiKey,
    unknownPetId: dependencies.unknownPetId,
    petIds: [],
    now: new Date(now()),
  });
  const answer = await invoke(lambda, functionNames.listPets, event);
  const page = v.safeParse(
    v.object({ statusCode: v.literal(200), body: v.pipe(v.string(), v.parseJson(), v.array(v.object({ id: v.number() }))) }),
    answer?.payload,
  );
  return page.success ? page.output.body.slice(0, Number(PET_IDS_LISTING.limit)).map((pet) => pet.id) : [];
}

/** Invokes a function's `live` alias; the answer and the version that gave it, or undefined when none came. */
async function invoke(
  lambda: TrafficLambdaApi,
  functionName: string,
  event: unknown,
): Promise<{ payload: unknown; version: string; failed: boolean } | undefined> {
  try {
    const answer = await lambda.invoke(
      { FunctionName: functionName, Qualifier: 'live', Payload: encodePayload(event) },
      { abortSignal: AbortSignal.timeout(DIRECT_INVOCATION_LIMIT_MS) },
    );
    return {
      payload: decodePayload(answer.Payload).value,
      version: answer.ExecutedVersion ?? '?',
      failed: answer.FunctionError !== undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * One request through the alias, summed up as `<version> <answer>`: a status, an authorizer's verdict, `error` or
 * `no answer`. A route function counts its own answers; the authorizer's judged verdicts are counted here.
 */
async function invokeLive(lambda: TrafficLambdaApi, functionName: string, event: unknown, requestId: string): Promise<string> {
  const answer = await invoke(lambda, functionName, event);
  if (answer === undefined) return 'no answer';
  if (answer.failed) return `${answer.version} error`;
  const payload = answer.payload as { statusCode?: unknown; context?: { outcome?: unknown } } | undefined;
  const kind = typeof payload?.statusCode === 'number' ? payload.statusCode : String(payload?.context?.outcome ?? 'unknown');
  // Counted here, as no access log sees these requests.
  if (kind in JUDGED_VERDICT_STATUSES) {
    countAuthorizerAnswer(JUDGED_VERDICT_STATUSES[kind as keyof typeof JUDGED_VERDICT_STATUSES], answer.version, requestId);
  }
  return `${answer.version} ${kind}`;
}
