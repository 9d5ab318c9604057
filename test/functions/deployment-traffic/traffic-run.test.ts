import { DEPLOYED_NAMES, FUNCTION_DEPLOYED_AS } from '../../helpers/fake-codedeploy';
import { describe, expect, it, vi } from 'vitest';
import {
  runDeploymentTraffic,
  STATUS_EVERY_MS,
  type DeploymentApi,
  type DeploymentTrafficDependencies,
  type TrafficLambdaApi,
} from '../../../functions/deployment-traffic/traffic-run';
import { TRAFFIC_KEY_ID } from '../../../functions/deployment-traffic/traffic-requests';
import { createAuthenticator } from '../../../shared/domain/auth/authenticate';
import { BAKE_MINUTES, LAMBDA_MAX_TIMEOUT_MS, TRAFFIC_INTERVAL_MS } from '../../../shared/facts/deployment';
import { FUNCTION_NAMES, type ApiFunctionName } from '../../../shared/facts/function-names';
import { httpEvent, lambdaContext } from '../../../tools/lambda/events';
import { InMemoryApiKeyStore, InMemoryIdempotencyStore, InMemoryPetStore } from '../../helpers/in-memory-stores';
import { captureOutput } from '../../helpers/output';
import { routeHandlers } from '../../helpers/route-handlers';
import { ensureNoFunctionNamed } from '../../helpers/unknown-function-name';
import { METRICS } from '../../../shared/facts/metric-names';

// Handlers validate their configuration when their module loads, as on a Lambda cold start.
vi.hoisted(() => {
  process.env.PETS_TABLE_NAME = 'unit-test-pets';
  process.env.IDEMPOTENCY_TABLE_NAME = 'unit-test-idempotency';
  process.env.CURSOR_SECRET = 'unit-test-cursor-secret-of-32-characters';
  process.env.PETS_LISTING_SHARDS = '8';
  process.env.PETS_WRITE_SHARDS = '8';
  // The traffic counts what no access log sees; the test run turns metrics off (vitest.config.ts).
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  process.env.POWERTOOLS_METRICS_NAMESPACE = 'AnimalStore/test';
});

const DEPLOYMENT = 'd-TRAFFIC1';
/** Every function's name joined: no function has it, whichever functions there are. */
const NOT_A_FUNCTION = ensureNoFunctionNamed(FUNCTION_NAMES.join('-'));

/** A stage's functions as they are, over in-memory stores, behind Lambda's Invoke; the version serving is `version`. */
function stage(version = '7') {
  const pets = new InMemoryPetStore();
  const idempotency = new InMemoryIdempotencyStore();
  const handlers = routeHandlers({ store: pets, idempotency, cursorSecret: process.env.CURSOR_SECRET! });
  const authenticate = createAuthenticator(new InMemoryApiKeyStore());
  const calls: Array<{ fn: ApiFunctionName; qualifier: string | undefined; event: any }> = [];
  const lambda: TrafficLambdaApi = {
    async invoke(input) {
      const fn = FUNCTION_DEPLOYED_AS.get(input.FunctionName ?? '')!;
      const event = JSON.parse(new TextDecoder().decode(input.Payload as Uint8Array));
      calls.push({ fn, qualifier: input.Qualifier, event });
      const payload =
        fn === 'authorizer'
          ? { isAuthorized: true, context: await authenticate(event.headers.authorization) }
          : await (await handlers)[fn](event, lambdaContext());
      return { ExecutedVersion: version, Payload: new TextEncoder().encode(JSON.stringify(payload)) };
    },
  };
  /** A pet stored as a client stores one, through createPet. */
  const create = async (name: string) => {
    const event = httpEvent({
      method: 'POST',
      body: JSON.stringify({ name, categoryId: 1 }),
      headers: { 'content-type': 'application/json' },
    });
    return JSON.parse((await (await handlers).createPet(event, lambdaContext())).body ?? 'null') as { id: number };
  };
  return { pets, idempotency, lambda, calls, create };
}

/** A clock that moves only when the run waits, and a deployment that ends at `endsAtMs` on it. */
function deployment(endsAtMs: number, endStatus = 'Succeeded', deploymentConfigName = 'CodeDeployDefault.LambdaCanary10Percent5Minutes') {
  let elapsed = 0;
  const reports: unknown[] = [];
  const codeDeploy: DeploymentApi = {
    async getDeployment(input) {
      expect(input.deploymentId).toBe(DEPLOYMENT);
      return { deploymentInfo: { status: elapsed >= endsAtMs ? endStatus : 'InProgress', deploymentConfigName } };
    },
    async putLifecycleEventHookExecutionStatus(input) {
      reports.push(input);
    },
  };
  const clock = {
    now: () => elapsed,
    wait: async (ms: number) => {
      elapsed += ms;
    },
    getRemainingTimeInMillis: () => LAMBDA_MAX_TIMEOUT_MS - elapsed,
  };
  return { codeDeploy, clock, reports, elapsed: () => elapsed };
}

function dependencies(lambda: TrafficLambdaApi, run: ReturnType<typeof deployment>): DeploymentTrafficDependencies {
  return {
    codeDeploy: run.codeDeploy,
    lambda,
    functionNames: DEPLOYED_NAMES,
    clock: run.clock,
    wait: run.clock.wait,
    now: run.clock.now,
    unknownApiKey: 'pets_deployment-traffic-unknown-key-000000000000',
    unknownPetId: 424_242,
  };
}

const answers = (calls: ReturnType<typeof stage>['calls'], fn: ApiFunctionName, payloads: unknown[]) =>
  calls.flatMap((call, index) => (call.fn === fn ? [payloads[index]] : []));

describe('the deployment traffic', () => {
  it('sends a function’s live alias a request every interval until its deployment ends, and no longer', async () => {
    const { lambda, calls } = stage();
    const run = deployment(60_000);
    await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: 'listPets' }, dependencies(lambda, run));
    expect(calls.every((call) => call.fn === 'listPets' && call.qualifier === 'live')).toBe(true);
    // The deployment is seen to end at the first status read after it ended.
    expect(calls.length).toBeGreaterThanOrEqual(60_000 / TRAFFIC_INTERVAL_MS);
    expect(calls.length).toBeLessThanOrEqual((60_000 + STATUS_EVERY_MS) / TRAFFIC_INTERVAL_MS);
    expect(run.elapsed()).toBeLessThan(60_000 + STATUS_EVERY_MS + TRAFFIC_INTERVAL_MS);
  });

  it('ends by itself before its own timeout when the deployment never does', async () => {
    const { lambda } = stage();
    const run = deployment(Number.POSITIVE_INFINITY);
    await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: 'routeNotFound' }, dependencies(lambda, run));
    expect(run.elapsed()).toBeLessThan(LAMBDA_MAX_TIMEOUT_MS);
  });

  it('reads stored pets, as the new version must find them, and refuses every create it sends before anything is stored', async () => {
    const { lambda, calls, pets, idempotency, create } = stage();
    const stored = [await create('Rex'), await create('Tom')];
    const payloads: unknown[] = [];
    const recording: TrafficLambdaApi = {
      invoke: async (input, options) => {
        const answer = await lambda.invoke(input, options);
        payloads.push(JSON.parse(new TextDecoder().decode(answer.Payload)));
        return answer;
      },
    };
    for (const fn of ['getPet', 'createPet', 'routeNotFound', 'authorizer'] as const) {
      await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: fn }, dependencies(recording, deployment(5_000)));
    }
    const statuses = (fn: ApiFunctionName) => new Set(answers(calls, fn, payloads).map((p: any) => p.statusCode));
    expect(new Set(answers(calls, 'getPet', payloads).map((p: any) => p.statusCode && JSON.parse(p.body).id))).toEqual(
      new Set(stored.map((pet) => pet.id)),
    );
    expect(statuses('createPet')).toEqual(new Set([400]));
    expect(statuses('routeNotFound')).toEqual(new Set([404]));
    expect(new Set(answers(calls, 'authorizer', payloads).map((p: any) => p.context.outcome))).toEqual(new Set(['invalid', 'missing']));
    expect(pets.pets.size).toBe(2);
    expect(idempotency.records.size).toBe(0);
    // Every route request comes as the traffic's own caller, which the functions log.
    expect(
      calls
        .filter((call) => call.fn !== 'authorizer')
        .every((call) => call.event.requestContext.authorizer?.lambda?.keyId === TRAFFIC_KEY_ID),
    ).toBe(true);
  });

  it('reads a pet no one has when the stage holds none, and lists pets as a client pages them', async () => {
    const { lambda, calls } = stage();
    await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: 'getPet' }, dependencies(lambda, deployment(2_000)));
    await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: 'listPets' }, dependencies(lambda, deployment(2_000)));
    expect(new Set(calls.filter((call) => call.fn === 'getPet').map((call) => call.event.pathParameters.petId))).toEqual(
      new Set(['424242']),
    );
    expect(new Set(calls.filter((call) => call.fn === 'listPets').map((call) => call.event.queryStringParameters.limit))).toEqual(
      new Set(['1', '20']),
    );
  });

  it("counts the authorizer's refusals by the version that gave them, as the access log counts those of API Gateway's requests", async () => {
    const { lambda, calls } = stage('12');
    const output = captureOutput({ silent: true });
    try {
      await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: 'authorizer' }, dependencies(lambda, deployment(2_000)));
    } finally {
      output.stop();
    }
    const counted = output.json().filter((line) => METRICS.authorizerAnswers in line);
    // Every other request carries an unknown key: `invalid`, our 401; a request without one is not judged.
    expect(counted.length).toBeGreaterThan(0);
    expect(counted).toHaveLength(calls.filter((call) => call.event.headers.authorization !== undefined).length);
    for (const line of counted) {
      expect(line).toEqual(expect.objectContaining({ status: '401', version: '12', [METRICS.authorizerAnswers]: 1 }));
      expect((line._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][] }> }).CloudWatchMetrics[0]!.Dimensions).toEqual([
        ['status'],
        ['status', 'version'],
      ]);
    }
    // The route functions count their own answers (shared/http/handler.ts): the traffic writes none for them.
    const routes = captureOutput({ silent: true });
    try {
      await runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: 'createPet' }, dependencies(stage().lambda, deployment(2_000)));
    } finally {
      routes.stop();
    }
    expect(routes.json().filter((line) => METRICS.authorizerAnswers in line)).toEqual([]);
  });

  it('refuses an event that is neither a bake nor a traffic run', async () => {
    const { lambda } = stage();
    await expect(
      runDeploymentTraffic({ deploymentId: DEPLOYMENT, function: NOT_A_FUNCTION }, dependencies(lambda, deployment(0))),
    ).rejects.toThrow(/deploymentId, function/);
  });
});

describe('the bake', () => {
  const bakeEvent = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: 'after-allow-traffic-1' };

  it('holds the deployment open for the bake, then lets it succeed', async () => {
    const { lambda, calls } = stage();
    const run = deployment(Number.POSITIVE_INFINITY);
    await runDeploymentTraffic(bakeEvent, dependencies(lambda, run));
    expect(run.elapsed()).toBe(BAKE_MINUTES * 60_000);
    expect(run.reports).toEqual([
      { deploymentId: DEPLOYMENT, lifecycleEventHookExecutionId: 'after-allow-traffic-1', status: 'Succeeded' },
    ]);
    expect(calls).toEqual([]);
  });

  it('lets an emergency release, which polls no alarm, succeed at once', async () => {
    const { lambda } = stage();
    const run = deployment(Number.POSITIVE_INFINITY, 'Succeeded', 'CodeDeployDefault.LambdaAllAtOnce');
    await runDeploymentTraffic(bakeEvent, dependencies(lambda, run));
    expect(run.elapsed()).toBe(0);
    expect(run.reports).toEqual([
      { deploymentId: DEPLOYMENT, lifecycleEventHookExecutionId: 'after-allow-traffic-1', status: 'Succeeded' },
    ]);
  });

  it('reports nothing for a deployment an alarm stopped during the bake, and stops waiting', async () => {
    const { lambda } = stage();
    const run = deployment(2 * 60_000, 'Stopped');
    await runDeploymentTraffic(bakeEvent, dependencies(lambda, run));
    expect(run.reports).toEqual([]);
    expect(run.elapsed()).toBeLessThan(2 * 60_000 + STATUS_EVERY_MS + 1);
  });
});
