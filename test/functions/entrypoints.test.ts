import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_HANDLER } from '../../shared/http/handler';
import { BASE_PATH, pathNaming, routeKey, routes, type Route } from '../../shared/facts/routes';
import { API_FUNCTIONS, fileNameOf, FUNCTION_NAMES } from '../../shared/facts/function-names';
import { FUNCTIONS_DIR, PROJECT_ROOT } from '../../shared/facts/project-layout';
import { snapshotEnv } from '../helpers/env';
import { CLOSED_PORT } from '../../local/addresses';
import { httpEvent, lambdaContext } from '../../tools/lambda/events';

/**
 * No route can be open by accident: every deployed function is named by the route table, and every
 * one of them but the authorizer is built with createHttpHandler, which refuses a request the
 * authorizer did not allow. A handler written by hand would skip that check, and nothing else in
 * front of it (API Gateway passes every request on, see docs/authentication.md) would stop it.
 */
const functionsDir = join(PROJECT_ROOT, FUNCTIONS_DIR);
const functionFiles = readdirSync(functionsDir)
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -'.ts'.length))
  .sort();

/** Each function's entry point by the one rule from its name. */
const namedFunctions = FUNCTION_NAMES.map(fileNameOf).sort();
/** The functions that answer HTTP requests: each operation's and routeNotFound. */
const httpFunctionNames: readonly string[] = [...routes.map((route) => route.operationId), 'routeNotFound'];

type Handler = ((event: unknown, context: unknown) => Promise<unknown>) & { [HTTP_HANDLER]?: true };
const modules = new Map<string, { handler?: Handler }>();
let restoreEnv: () => void;

beforeAll(async () => {
  restoreEnv = snapshotEnv();
  // Each function reads its configuration at cold start (import). Give every one what any of them
  // needs, and a DynamoDB that refuses at once, so a handler that reached the store without
  // checking the caller would fail the assertions below, not hang or touch a real table.
  Object.assign(process.env, {
    PETS_TABLE_NAME: 'entrypoints-pets',
    API_KEYS_TABLE_NAME: 'entrypoints-api-keys',
    IDEMPOTENCY_TABLE_NAME: 'entrypoints-idempotency',
    CURSOR_SECRET: 'entrypoints-cursor-secret-of-32-characters',
    PETS_LISTING_SHARDS: '8',
    PETS_WRITE_SHARDS: '8',
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'entrypoints',
    AWS_SECRET_ACCESS_KEY: 'entrypoints',
    PRE_TRAFFIC_CHECK_TARGETS: JSON.stringify(Object.fromEntries(API_FUNCTIONS.map((name) => [name, `entrypoints-${name}`]))),
    DEPLOYMENT_TRAFFIC_FUNCTION: 'deployment-traffic',
    PROBE_BASE_URL: 'https://api.invalid/v1',
    PROBE_API_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:probe',
    AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${CLOSED_PORT}`,
  });
  for (const name of functionFiles) {
    modules.set(name, await import(pathToFileURL(join(functionsDir, `${name}.ts`)).href));
  }
});
afterAll(() => restoreEnv?.());

describe('the functions/ folder', () => {
  it('holds exactly the functions the stage deploys, each under its name: the operations, routeNotFound, the authorizer and the two checks', () => {
    expect(functionFiles).toEqual(namedFunctions);
  });

  it.each(functionFiles)('functions/%s.ts exports a handler function', (name) => {
    expect(typeof modules.get(name)?.handler).toBe('function');
  });
});

// Every file but the authorizer's and the checks', so a stray one fails here as well as above.
const httpFunctions = functionFiles.filter((file) => httpFunctionNames.map(fileNameOf).includes(file) || !namedFunctions.includes(file));

describe.each(httpFunctions)('the function %s', (name) => {
  it('is built with createHttpHandler', () => {
    expect(modules.get(name)?.handler?.[HTTP_HANDLER], `functions/${name}.ts must export createHttpHandler(...)`).toBe(true);
  });

  it.each([
    ['no authorizer context (a route deployed without the authorizer)', undefined],
    ['a missing key', { outcome: 'missing' as const }],
    ['an invalid key', { outcome: 'invalid' as const }],
  ])('answers 401 unauthorized to a request with %s', async (_, verdict) => {
    const route = routes.find((candidate) => fileNameOf(candidate.operationId) === name) as Route | undefined;
    // routeNotFound serves whatever no route matched; an unknown path stands for all of them.
    const rawPath = route ? pathNaming(route, '1').rawPath : `${BASE_PATH}/nowhere`;
    const method = route?.method ?? 'GET';
    const event = httpEvent({
      method,
      rawPath,
      routeKey: route ? routeKey(route) : '$default',
      headers: { 'content-type': 'application/json' },
      body: method === 'POST' ? JSON.stringify({ name: 'Rex', categoryId: 1 }) : undefined,
      authorizer: verdict,
    });
    const response = (await modules.get(name)!.handler!(event, lambdaContext())) as { statusCode: number; body: string };
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'unauthorized', status: 401 });
  });
});
