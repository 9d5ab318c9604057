import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { production, stages, type StageConfig } from '../../infra/stages';
import { CLOSED_PORT } from '../../local/addresses';
import { createLocalClient, startDynalite, ensureTables, type LocalDynamoDb } from '../../local/dynamodb-local';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { authorizerEvent, httpEvent, type HttpEventOptions } from '../../tools/lambda/events';
import { functionAssets, type FunctionAsset } from '../../tools/lambda/function-assets';
import { invokeBundle, runtimeNode, type Invocation } from '../../tools/lambda/lambda-runner';
import type { SynthesizedStage } from '../../tools/lambda/synth';
import { synthesizedApp, type SharedSynthesis } from '../helpers/synthesized-app';
import { serveCountingReads } from '../helpers/counted-reads';
import { preTrafficHookTimeoutMs } from '../../functions/pre-traffic-hook/hook-time-budget';
import { runPreTrafficChecks, type CodeDeployApi, type LambdaApi } from '../../functions/pre-traffic-hook/pre-traffic-run';
import { checksFor } from '../../functions/pre-traffic-hook/pre-traffic-expectations';

import { generateApiKey } from '../../shared/domain/auth/api-keys';
import { ENV } from '../../shared/facts/environment';
import { FAKE_CURRENT_VERSION, fakeCodeDeploy, fakeLambda, serveAwsApis } from '../helpers/fake-codedeploy';
import { API_FUNCTIONS, fileNameOf, type ApiFunctionName } from '../../shared/facts/function-names';

/**
 * The bundle check: every function's asset, exactly as `cdk deploy` would upload it, loaded in a
 * fresh Node.js process of the Lambda runtime's major version with nothing but the asset directory
 * and the environment the template gives it, then invoked with API Gateway-shaped events against
 * DynamoDB (dynalite). A bundling mistake (a missing module, a broken banner,
 * a missing environment variable) fails here rather than on the first production request.
 */

/** The error logged with `message` among a bundle's log lines, as the logger wrote it. */
function loggedError(output: string, message: string): Record<string, unknown> | undefined {
  const entries = output
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { message?: string; error?: Record<string, unknown> });
  return entries.find((entry) => entry.message === message)?.error;
}

/** A generous ceiling, so an accidental dependency (the whole SDK, a second copy of it) gets noticed. */
const MAX_BUNDLE_BYTES = 1024 * 1024;
const CURSOR_SECRET = 'bundle-check-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz';

let synthesis: SharedSynthesis;
let dynamo: LocalDynamoDb;
let node: string;

beforeAll(async () => {
  node = runtimeNode();
  dynamo = await startDynalite({ port: 0 });
  synthesis = synthesizedApp();
});

afterAll(async () => {
  await dynamo?.close();
});

describe('the bundles of every stage', () => {
  it('are the same code: each function deploys the same asset in every stage, which only its environment tells apart', () => {
    // An asset's directory is named by the hash of its content.
    const assetsOf = (config: StageConfig) =>
      Object.fromEntries([...functionAssets(synthesis, synthesis.stage(config.name))].map(([name, { taskRoot }]) => [name, taskRoot]));
    for (const config of stages) expect(assetsOf(config), config.name).toEqual(assetsOf(production));
  });
});

// Every stage ships the bundles production runs (above): they are run once, with production's environment.
describe.each([production])('the bundles of the $name stage', (config: StageConfig) => {
  const tables = { pets: `${config.name}-pets`, apiKeys: `${config.name}-api-keys`, idempotency: `${config.name}-idempotency` };
  let stage: SynthesizedStage;
  let apiKey: string;
  let keyId: string;

  beforeAll(async () => {
    stage = synthesis.stage(config.name);
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'bundle-check', secretAccessKey: 'bundle-check' },
    });
    await ensureTables(client, tables);
    const issued = await issueApiKey(new DynamoApiKeyStore(documentClientOver(client), tables.apiKeys), 'bundle-check');
    apiKey = issued.apiKey;
    keyId = issued.record.keyId;
    client.destroy();
  });

  function asset(handler: ApiFunctionName): FunctionAsset {
    const found = functionAssets(synthesis, stage).get(handler);
    if (!found) throw new Error(`No function for ${handler}`);
    return found;
  }

  function taskRoot(handler: ApiFunctionName): string {
    return asset(handler).taskRoot;
  }

  /** The source files the asset's bundle was built from, as its source map lists them. */
  function bundledSources(handler: ApiFunctionName): string[] {
    return (JSON.parse(readFileSync(join(taskRoot(handler), 'index.js.map'), 'utf8')) as { sources: string[] }).sources;
  }

  /** The function's environment as Lambda would set it, references resolved to the local tables. */
  function environment(handler: ApiFunctionName, endpoint = dynamo.endpoint): Record<string, string> {
    return asset(handler).environment({ tables, dynamoDbEndpoint: endpoint, cursorSecret: CURSOR_SECRET });
  }

  async function invoke(
    handler: ApiFunctionName,
    events: unknown[],
    endpoint?: string,
    overrides: Record<string, string> = {},
  ): Promise<Invocation> {
    const env = { ...environment(handler, endpoint), ...overrides };
    const invocation = await invokeBundle(node, { taskRoot: taskRoot(handler), env, events });
    // Everything the process writes is the function's structured log (warnings and errors go to
    // stderr): one JSON object per line. A Node warning or a crash message would not parse.
    for (const line of `${invocation.stdout}\n${invocation.stderr}`.split('\n').filter(Boolean)) {
      expect(() => JSON.parse(line), line).not.toThrow();
    }
    return invocation;
  }

  function createEvent(body: Record<string, unknown>) {
    return httpEvent({
      method: 'POST',
      routeKey: 'POST /v1/pets',
      rawPath: '/v1/pets',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  it('uploads nothing but the CommonJS bundle and its source map, within the size budget', () => {
    for (const handler of API_FUNCTIONS) {
      const dir = taskRoot(handler);
      expect(readdirSync(dir).sort(), handler).toEqual(['index.js', 'index.js.map']);
      expect(statSync(join(dir, 'index.js')).size, handler).toBeLessThan(MAX_BUNDLE_BYTES);
      const code = readFileSync(join(dir, 'index.js'), 'utf8');
      expect(code.startsWith("'use strict';"), handler).toBe(true);
      expect(code.trimEnd().endsWith('//# sourceMappingURL=index.js.map'), handler).toBe(true);
      const sources = bundledSources(handler);
      expect(sources, handler).toContain(`functions/${fileNameOf(handler)}.ts`);
      // Relative to the repository, never to where it is checked out: the map is part of the asset's
      // hash, so a machine-specific path would give every machine different templates.
      for (const source of sources) expect(source, handler).toMatch(/^(?:functions|shared|node_modules)\//);
    }
  });

  it('require every Node built-in they use, so none gets an ES-module wrapper, and load no undici by the first answer', async () => {
    for (const handler of ['listPets', 'createPet', 'getPet', 'authorizer'] as const) {
      const code = readFileSync(join(taskRoot(handler), 'index.js'), 'utf8');
      expect(code.match(/\bimport\s*\(|\bfrom\s*["'](?:node:)?[a-z_/]+["']/g), handler).toBeNull();
    }
    const { coldStart } = await invoke('getPet', [
      httpEvent({ routeKey: 'GET /v1/pets/{petId}', rawPath: '/v1/pets/1', pathParameters: { petId: '1' } }),
    ]);
    expect(coldStart.modulesLoaded).toContain('NativeModule https');
    expect(coldStart.modulesLoaded.filter((module) => module.includes('undici'))).toEqual([]);
  });

  it('carries no schema that only the contract reads, which would be built at every cold start', () => {
    for (const handler of API_FUNCTIONS) {
      // The answers' schemas, the error body's, and what only the stacks, the tools and the document read of each
      // function: its operation's file, the catalog.
      const contractOnly = bundledSources(handler).filter((source) =>
        /^(?:shared\/(?:contract|operations|catalog)\/|shared\/domain\/pets\/pet-output-schemas\.ts$|shared\/http\/error-schema\.ts$)/.test(
          source,
        ),
      );
      expect(contractOnly, handler).toEqual([]);
    }
    // Nor another operation's parameters: the route table no longer brings them along.
    expect(bundledSources('createPet')).not.toContain('shared/http/pet-parameters.ts');
    expect(bundledSources('listPets')).toContain('shared/http/pet-parameters.ts');
  });

  it('lets the authorizer bundle verify a key stored in the keys table, naming the version that gave each verdict', async () => {
    const { results } = await invoke('authorizer', [authorizerEvent(`Bearer ${apiKey}`), authorizerEvent()]);
    // Lambda's version of the bundle as it runs here (tools/lambda/function-assets.ts): the access log records it.
    expect(results).toEqual([
      { isAuthorized: true, context: { outcome: 'allowed', keyId, version: '$LATEST' } },
      { isAuthorized: true, context: { outcome: 'missing', version: '$LATEST' } },
    ]);
  });

  it("logs the authorizer's failed key lookup in our sources", async () => {
    const invocation = await invoke('authorizer', [authorizerEvent(`Bearer ${apiKey}`)], undefined, {
      [ENV.apiKeysTable]: `${tables.apiKeys}-missing`,
    });
    expect(invocation.results).toEqual([{ isAuthorized: true, context: { outcome: 'unavailable', version: '$LATEST' } }]);
    const logged = loggedError(invocation.stderr, 'API key lookup failed');
    expect(logged?.stack).toContain('shared/dynamodb/dynamo-api-key-store.ts');
    expect(logged?.stack).not.toContain('index.js:');
  });

  it('lets the create bundle store pets', async () => {
    const { results } = await invoke('createPet', [
      createEvent({ name: 'Rex', categoryId: 1, status: 'available' }),
      createEvent({ name: 'Tom', categoryId: 2 }),
    ]);
    expect(results.map((result) => result.statusCode)).toEqual([201, 201]);
    expect(JSON.parse(results[0].body)).toEqual(expect.objectContaining({ name: 'Rex', categoryId: 1, id: expect.any(Number) }));
  });

  it('lets the list bundle page through the pets with cursors it signs with the stage secret', async () => {
    const first = httpEvent({ routeKey: 'GET /v1/pets', rawPath: '/v1/pets', query: { limit: '1' } });
    const [page] = (await invoke('listPets', [first])).results;
    expect(page.statusCode).toBe(200);
    expect(JSON.parse(page.body)).toHaveLength(1);
    const next = new URL(/<([^>]+)>; rel="next"/.exec(page.headers.link)![1]!);
    const second = httpEvent({
      routeKey: 'GET /v1/pets',
      rawPath: '/v1/pets',
      query: Object.fromEntries(next.searchParams),
    });
    const [nextPage] = (await invoke('listPets', [second])).results;
    expect(nextPage.statusCode).toBe(200);
    const names = [...JSON.parse(page.body), ...JSON.parse(nextPage.body)].map((pet: { name: string }) => pet.name);
    expect(names.sort()).toEqual(['Rex', 'Tom']);
  });

  it('lets the get bundle read a pet, flagged deprecated', async () => {
    const list = httpEvent({ routeKey: 'GET /v1/pets', rawPath: '/v1/pets' });
    const [{ body }] = (await invoke('listPets', [list])).results;
    const [pet] = JSON.parse(body) as { id: number }[];
    const get = httpEvent({
      routeKey: 'GET /v1/pets/{petId}',
      rawPath: `/v1/pets/${pet!.id}`,
      pathParameters: { petId: String(pet!.id) },
    });
    const [response] = (await invoke('getPet', [get])).results;
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual(pet);
    expect(response.headers).toEqual(expect.objectContaining({ deprecation: expect.any(String), sunset: expect.any(String) }));
  });

  it('lets the routeNotFound bundle answer an unknown path with our 404 Error body', async () => {
    const [response] = (await invoke('routeNotFound', [httpEvent({ routeKey: '$default', rawPath: '/v1/nowhere' })])).results;
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });

  it('answers 503 with our Error body, well before the function times out, when DynamoDB is unreachable, naming the outage and its cause', async () => {
    const get = httpEvent({ routeKey: 'GET /v1/pets/{petId}', rawPath: '/v1/pets/1', pathParameters: { petId: '1' } });
    const invocation = await invoke('getPet', [get], `http://127.0.0.1:${CLOSED_PORT}`);
    const [response] = invocation.results;
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(invocation.firstInvokeMs).toBeLessThan(asset('getPet').timeoutMs);
    // An outage is logged by its error and cause, without stacks (shared/http/handler.ts).
    expect(loggedError(invocation.stderr, 'Dependency unavailable')).toEqual({
      name: 'StoreUnavailableError',
      message: expect.any(String),
      cause: expect.objectContaining({ code: 'ECONNREFUSED' }),
    });
  });

  it('reads its source map only for an error whose stack it logs: a 401, a 400, a 404 and a 503 leave it unread, a 500 is logged in our sources', async () => {
    const root = mkdtempSync(join(tmpdir(), 'animal-store-map-reads-'));
    try {
      copyFileSync(join(taskRoot('getPet'), 'index.js'), join(root, 'index.js'));
      const map = serveCountingReads(join(root, 'index.js.map'), readFileSync(join(taskRoot('getPet'), 'index.js.map')));
      // Its table missing, a read is a 500.
      const env = { ...environment('getPet'), LAMBDA_TASK_ROOT: root, [ENV.petsTable]: `${tables.pets}-missing` };
      const get = (petId: string, options: HttpEventOptions = {}) =>
        httpEvent({ routeKey: 'GET /v1/pets/{petId}', rawPath: `/v1/pets/${petId}`, pathParameters: { petId }, ...options });
      const refused = get('1', { authorizer: { outcome: 'missing' } });
      try {
        const answered = await invokeBundle(node, {
          taskRoot: root,
          env,
          events: [refused, get('1', { query: { status: 'sold' } }), get('abc')],
        });
        expect(answered.results.map((result) => result.statusCode)).toEqual([401, 400, 404]);
        const outage = await invokeBundle(node, {
          taskRoot: root,
          env: { ...env, ...environment('getPet', `http://127.0.0.1:${CLOSED_PORT}`), LAMBDA_TASK_ROOT: root },
          events: [get('1')],
        });
        expect(outage.results.map((result) => result.statusCode)).toEqual([503]);
        expect(map.reads()).toBe(0);
        const failed = await invokeBundle(node, { taskRoot: root, env, events: [refused, get('1')] });
        expect(failed.results.map((result) => result.statusCode)).toEqual([401, 500]);
        expect(map.reads()).toBe(1);
        const logged = loggedError(failed.stderr, 'Request failed');
        expect(logged?.stack).toContain('shared/dynamodb/dynamo-pet-store.ts');
        expect(logged?.stack).not.toContain('index.js:');
      } finally {
        await map.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
  describe('under the pre-traffic hook', () => {
    const DEPLOYMENT = 'd-BUNDLECHECK';
    const EVENT = { DeploymentId: DEPLOYMENT, LifecycleEventHookExecutionId: 'bundle-check-hook-execution' };
    const EVENT_IDS = { deploymentId: DEPLOYMENT, lifecycleEventHookExecutionId: EVENT.LifecycleEventHookExecutionId };

    /** The name each function is deployed under here: the one its environment gives it (tools/lambda/function-assets.ts). */
    function deployedName(fn: ApiFunctionName): string {
      return `${config.stackName}-${stage.stack.functions.byName.get(fn)!.node.id}`;
    }

    /**
     * Lambda's Invoke of a published version, served by running the function's asset as the bundle check does:
     * the version being deployed with `overrides` to its environment, the one serving now as the template has it.
     */
    function bundleLambda(overrides: Partial<Record<ApiFunctionName, Record<string, string>>> = {}) {
      const byName = new Map(API_FUNCTIONS.map((fn) => [deployedName(fn), fn]));
      return fakeLambda(async (call) => {
        const fn = byName.get(call.functionName ?? '');
        if (fn === undefined) throw new Error(`No function ${call.functionName}`);
        const environment = call.qualifier === FAKE_CURRENT_VERSION ? undefined : overrides[fn];
        const [result] = (await invoke(fn, [call.event], undefined, environment)).results;
        return { payload: result };
      });
    }

    function checks(fn: ApiFunctionName, lambda: LambdaApi) {
      const codeDeploy = fakeCodeDeploy(DEPLOYMENT, [{ functionName: deployedName(fn), targetVersion: '2' }]);
      const run = runPreTrafficChecks(EVENT, {
        codeDeploy: codeDeploy.api,
        lambda,
        functionNames: Object.fromEntries(API_FUNCTIONS.map((name) => [name, deployedName(name)])) as Record<ApiFunctionName, string>,
        trafficFunction: `${config.stackName}-deploymentTraffic`,
        clock: { getRemainingTimeInMillis: () => preTrafficHookTimeoutMs() },
        checkContext: (runId) => ({ runId, unknownApiKey: generateApiKey(), unknownPetId: 4_503_599_627_370_497, now: new Date() }),
        checkKeys: new DynamoApiKeyStore(documentClientOver(createLocalClient(dynamo.endpoint)), tables.apiKeys),
      });
      return { run, reports: codeDeploy.reports };
    }

    it.each(API_FUNCTIONS)('lets the new version of %s through: every check gets the answer the hook expects', async (fn) => {
      const { run, reports } = checks(fn, bundleLambda().api);
      await expect(run).resolves.toBe('Succeeded');
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
    });

    it('stops an authorizer that cannot read its keys table, which the one serving now reads, before it takes traffic', async () => {
      const lambda = bundleLambda({ authorizer: { [ENV.apiKeysTable]: `${tables.apiKeys}-missing` } });
      const { run, reports } = checks('authorizer', lambda.api);
      await expect(run).resolves.toBe('Failed');
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(lambda.calls.some((call) => call.qualifier === FAKE_CURRENT_VERSION)).toBe(true);
      expect(lambda.queued).toEqual([]);
    });

    const trafficName = `${config.stackName}-DeploymentTraffic`;

    /** The hook's asset directory and its resource in the template. */
    function hookAsset() {
      const hook = stage.stack.preTrafficChecks.function;
      const resource = stage.json.Resources[stage.stack.getLogicalId(hook.node.defaultChild as CfnElement)]!;
      return { hookRoot: join(synthesis.outdir, resource.Metadata!['aws:asset:path']), resource };
    }

    /** Runs the hook's own bundle on EVENT, CodeDeploy's and Lambda's APIs served by `codeDeploy` and `lambda`. */
    async function invokeHookBundle(codeDeploy: CodeDeployApi, lambda: LambdaApi): Promise<Invocation> {
      const { hookRoot, resource } = hookAsset();
      // The template's environment, each function's reference resolved to its deployed name.
      const names = new Map(
        API_FUNCTIONS.map((fn) => [
          stage.stack.getLogicalId(stage.stack.functions.byName.get(fn)!.function.node.defaultChild as CfnElement),
          deployedName(fn),
        ]),
      );
      names.set(stage.stack.getLogicalId(stage.stack.apiKeysTable.table.node.defaultChild as CfnElement), tables.apiKeys);
      names.set(stage.stack.getLogicalId(stage.stack.deploymentTraffic.function.node.defaultChild as CfnElement), trafficName);
      const resolve = (value: unknown): string => {
        if (typeof value === 'string') return value;
        if ((value as { Ref?: string }).Ref) return names.get((value as { Ref: string }).Ref)!;
        const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
        return parts.map((part) => (typeof part === 'string' ? part : names.get((part as { Ref: string }).Ref)!)).join(separator);
      };
      const variables = Object.fromEntries(
        Object.entries(resource.Properties!.Environment.Variables as Record<string, unknown>).map(([name, value]) => [
          name,
          resolve(value),
        ]),
      );

      const aws = await serveAwsApis(codeDeploy, lambda);
      try {
        const env = {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          LAMBDA_TASK_ROOT: hookRoot,
          AWS_LAMBDA_FUNCTION_NAME: `${config.stackName}-PreTrafficChecks`,
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(resource.Properties!.MemorySize),
          FUNCTION_TIMEOUT_MS: String(resource.Properties!.Timeout * 1000),
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'bundle-check',
          AWS_SECRET_ACCESS_KEY: 'bundle-check',
          AWS_ENDPOINT_URL_CODEDEPLOY: aws.endpoint,
          AWS_ENDPOINT_URL_LAMBDA: aws.endpoint,
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
          ...variables,
        };
        const invocation = await invokeBundle(node, { taskRoot: hookRoot, env, events: [EVENT] });
        for (const line of `${invocation.stdout}\n${invocation.stderr}`.split('\n').filter(Boolean)) {
          expect(() => JSON.parse(line), line).not.toThrow();
        }
        return invocation;
      } finally {
        await aws.close();
      }
    }

    it("runs the hook's own bundle: it finds what the deployment moves, checks that version and reports to CodeDeploy", async () => {
      expect(readdirSync(hookAsset().hookRoot).sort()).toEqual(['index.js', 'index.js.map']);
      const codeDeploy = fakeCodeDeploy(DEPLOYMENT, [{ functionName: deployedName('authorizer'), targetVersion: '2' }]);
      const lambda = bundleLambda();
      await invokeHookBundle(codeDeploy.api, lambda.api);
      // Every check of the new version, each passed, so the old one is asked nothing; then the canary's traffic run starts.
      const key = { apiKey: 'k', keyId: 'k' };
      const checks = checksFor('authorizer', {
        runId: 'r',
        unknownApiKey: 'k',
        unknownPetId: 1,
        now: new Date(),
        checkKeys: { withExpiry: key, withoutExpiry: key, revoked: key },
      });
      expect(lambda.calls.map((call) => [call.functionName, call.qualifier])).toEqual(checks.map(() => [deployedName('authorizer'), '2']));
      expect(codeDeploy.reports).toEqual([{ ...EVENT_IDS, status: 'Succeeded' }]);
      expect(lambda.queued.map((call) => [call.functionName, call.event])).toEqual([
        [trafficName, { deploymentId: DEPLOYMENT, function: 'authorizer' }],
      ]);
    });

    it("logs in our sources the error that kept the hook's checks from running", async () => {
      const codeDeploy = fakeCodeDeploy(DEPLOYMENT, [{ functionName: deployedName('authorizer'), targetVersion: '2' }], {
        failing: 'listDeploymentTargets',
      });
      const lambda = bundleLambda();
      const invocation = await invokeHookBundle(codeDeploy.api, lambda.api);
      expect(codeDeploy.reports).toEqual([{ ...EVENT_IDS, status: 'Failed' }]);
      const logged = loggedError(invocation.stderr, 'The pre-traffic checks could not run');
      expect(logged?.stack).toContain('functions/pre-traffic-hook/pre-traffic-run.ts');
      expect(logged?.stack).not.toContain('index.js:');
    });
  });
});
