import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stages, type StageConfig } from '../../infra/stages';
import { startDynalite, ensureTables, type LocalDynamoDb } from '../../local/dynamodb-local';
import { DynamoApiKeyStore } from '../../src/dynamodb/dynamo-api-key-store';
import { issueApiKey } from '../../src/domain/auth/manage-api-keys';
import { documentClientOver } from '../../src/dynamodb/dynamodb-client';
import { authorizerEvent, httpEvent } from '../../tools/lambda/events';
import { functionAssets, type FunctionAsset, type FunctionName } from '../../tools/lambda/function-assets';
import { invokeBundle, runtimeNode, type Invocation } from '../../tools/lambda/lambda-runner';
import { synthesize, type SynthesizedStage, type Synthesis } from '../../tools/lambda/synth';

/**
 * The bundle check: every function's asset, exactly as `cdk deploy` would upload it, loaded in a
 * fresh Node.js process of the Lambda runtime's major version with nothing but the asset directory
 * and the environment the template gives it, then invoked with API Gateway-shaped events against
 * DynamoDB (dynalite). A bundling mistake (a missing module, a `require` in ESM, a broken banner,
 * a missing environment variable) fails here rather than on the first production request.
 */

/** A generous ceiling, so an accidental dependency (the whole SDK, a second copy of it) gets noticed. */
const MAX_BUNDLE_BYTES = 1024 * 1024;
const CURSOR_SECRET = 'bundle-check-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz';

let synthesis: Synthesis;
let dynamo: LocalDynamoDb;
let node: string;

beforeAll(async () => {
  node = runtimeNode();
  dynamo = await startDynalite({ port: 0 });
  synthesis = synthesize();
});

afterAll(async () => {
  synthesis?.dispose();
  await dynamo?.close();
});

describe.each(stages)('the bundles of the $name stage', (config: StageConfig) => {
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

  function asset(handler: FunctionName): FunctionAsset {
    const found = functionAssets(synthesis, stage).get(handler);
    if (!found) throw new Error(`No function for ${handler}`);
    return found;
  }

  function taskRoot(handler: FunctionName): string {
    return asset(handler).taskRoot;
  }

  /** The source files the asset's bundle was built from, as its source map lists them. */
  function bundledSources(handler: FunctionName): string[] {
    return (JSON.parse(readFileSync(join(taskRoot(handler), 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
  }

  /** The function's environment as Lambda would set it, references resolved to the local tables. */
  function environment(handler: FunctionName, endpoint = dynamo.endpoint): Record<string, string> {
    return asset(handler).environment({ tables, dynamoDbEndpoint: endpoint, cursorSecret: CURSOR_SECRET });
  }

  async function invoke(handler: FunctionName, events: unknown[], endpoint?: string): Promise<Invocation> {
    const invocation = await invokeBundle(node, { taskRoot: taskRoot(handler), env: environment(handler, endpoint), events });
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

  it('uploads nothing but the ESM bundle and its source map, within the size budget', () => {
    for (const handler of ['listPets', 'createPet', 'getPet', 'routeNotFound', 'authorizer'] as const) {
      const dir = taskRoot(handler);
      expect(readdirSync(dir).sort(), handler).toEqual(['index.mjs', 'index.mjs.map']);
      expect(statSync(join(dir, 'index.mjs')).size, handler).toBeLessThan(MAX_BUNDLE_BYTES);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire } from 'module';"), handler).toBe(true);
      expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map'), handler).toBe(true);
      const sources = bundledSources(handler);
      expect(sources, handler).toContain(`src/handlers/${asset(handler).handler}.ts`);
      // Relative to the repository, never to where it is checked out: the map is part of the asset's
      // hash, so a machine-specific path would give every machine different templates.
      for (const source of sources) expect(source, handler).toMatch(/^(?:src|node_modules)\//);
    }
  });

  it('carries no schema that only the contract reads, which would be built at every cold start', () => {
    for (const handler of ['listPets', 'createPet', 'getPet', 'routeNotFound', 'authorizer'] as const) {
      // The answers' schemas, the error body's, and each operation's schemas by route.
      const contractOnly = bundledSources(handler).filter((source) =>
        /^(?:contract\/|shared\/pets\/pet-output-schemas\.ts$|shared\/http\/error-schema\.ts$)/.test(source),
      );
      expect(contractOnly, handler).toEqual([]);
    }
    // Nor another operation's parameters: the route table no longer brings them along.
    expect(bundledSources('createPet')).not.toContain('src/http/pet-parameters.ts');
    expect(bundledSources('listPets')).toContain('src/http/pet-parameters.ts');
  });

  it('lets the authorizer bundle verify a key stored in the keys table', async () => {
    const { results } = await invoke('authorizer', [authorizerEvent(`Bearer ${apiKey}`), authorizerEvent()]);
    expect(results).toEqual([
      { isAuthorized: true, context: { outcome: 'allowed', keyId } },
      { isAuthorized: true, context: { outcome: 'missing' } },
    ]);
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

  it('answers 503 with our Error body, well before the function times out, when DynamoDB is unreachable', async () => {
    const get = httpEvent({ routeKey: 'GET /v1/pets/{petId}', rawPath: '/v1/pets/1', pathParameters: { petId: '1' } });
    const invocation = await invoke('getPet', [get], 'http://127.0.0.1:9');
    const [response] = invocation.results;
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(invocation.firstInvokeMs).toBeLessThan(asset('getPet').timeoutMs);
    // The map read when the error is logged (src/runtime/stack-traces.ts): the stack names our sources, not the minified bundle.
    expect(invocation.stderr).toContain('src/dynamodb/dynamo-pet-store.ts');
  });
});
