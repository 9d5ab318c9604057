import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServerProcess, type RunningServer } from '../helpers/cli';
import { CLOSED_PORT } from '../../local/addresses';
import { createTemporaryCheckout, type TemporaryCheckout } from '../helpers/temporary-checkout';
import { routes, type Route } from '../../shared/facts/routes';

/** What a developer sees under `npm run dev` and `npm run invoke` while editing: each run in a checkout of its own. */

const LIST_PETS = 'functions/list-pets.ts';
const ENVIRONMENT = 'shared/facts/environment.ts';
const FUNCTION_CONFIG = 'shared/runtime/function-config.ts';
const LIST_PETS_OPERATION = 'shared/operations/list-pets-operation.ts';
const GET_PET_OPERATION = 'shared/operations/get-pet-operation.ts';
const CORS_POLICY = 'shared/http/cors-policy.ts';
const BROWSER_ORIGIN = 'http://localhost:5173';
/** A start, an edit or two and the requests that follow them, each edit waiting for the reload. */
const DEV_TEST_TIMEOUT = 120_000;

/** The server's failure reports: its JSON lines at level ERROR that name a phase. */
function failureReports(output: string): Array<{ level: string; message: string; function?: string; phase: string }> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"phase"'))
    .map((line) => JSON.parse(line));
}

/** Lambda's own log line for what a function threw, as the instance writes it. */
function thrownLines(output: string): Array<{ errorMessage: string; stackTrace: string[] }> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"errorMessage"'))
    .map((line) => JSON.parse(line));
}

describe('npm run dev, when a function fails to build or load', () => {
  let checkout: TemporaryCheckout;
  let server: RunningServer;
  let original: string;
  beforeAll(async () => {
    checkout = await createTemporaryCheckout();
    original = await checkout.read(LIST_PETS);
    server = await startServerProcess({}, { cwd: checkout.root, watch: true });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await checkout?.remove();
  });

  const listPets = () => fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
  /** Requests the pets until the server reports a failure `matching`, then returns that report and the answer. */
  async function failureAfterEdit(matching: (report: { message: string; phase: string }) => boolean) {
    let answer: { status: number; body: unknown } | undefined;
    await expect
      .poll(
        async () => {
          const response = await listPets();
          answer = { status: response.status, body: await response.json() };
          return failureReports(server.output()).some(matching);
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(true);
    return { answer: answer!, report: failureReports(server.output()).find(matching)! };
  }

  it(
    "prints esbuild's message with the file, line and column of a syntax error, and answers API Gateway's 500",
    async () => {
      const text = `${original}export const broken = ;\n`;
      await checkout.write(LIST_PETS, text);
      const line = text.split('\n').length - 1;
      const { answer, report } = await failureAfterEdit((report) => report.message.includes('Unexpected'));
      expect(answer).toEqual({ status: 500, body: { message: 'Internal Server Error' } });
      expect(report).toMatchObject({ level: 'ERROR', function: 'listPets', phase: 'build' });
      expect(report.message).toContain(`${LIST_PETS}:${line}:22: ERROR: Unexpected ";"`);
    },
    DEV_TEST_TIMEOUT,
  );

  it(
    'prints what a module threw while loading, with its stack in the TypeScript source, naming the function',
    async () => {
      await checkout.write(LIST_PETS, `throw new Error('the pets are out');\n${original}`);
      const { answer, report } = await failureAfterEdit((report) => report.message.includes('the pets are out'));
      expect(answer).toEqual({ status: 500, body: { message: 'Internal Server Error' } });
      expect(report).toMatchObject({ level: 'ERROR', function: 'listPets', phase: 'init' });
      expect(report.message).toContain(`(${LIST_PETS}:1:7)`);
      const thrown = thrownLines(server.output()).find((line) => line.errorMessage === 'the pets are out');
      expect(thrown?.stackTrace[1]).toContain(`${checkout.root}/${LIST_PETS}:1:7`);
    },
    DEV_TEST_TIMEOUT,
  );

  it(
    'names a variable the configuration now requires and the environment lacks, and the function that refused it',
    async () => {
      await checkout.write(LIST_PETS, original);
      // A new variable, as a developer adds one: its name, its schema, and listPets reading it.
      const edits = [
        [ENVIRONMENT, 'export const ENV = {', "export const ENV = {\n  photosBucket: 'PET_PHOTOS_BUCKET',"],
        [FUNCTION_CONFIG, 'const OPERATION_VARIABLE_SCHEMAS = {', 'const OPERATION_VARIABLE_SCHEMAS = {\n  photosBucket: RequiredString,'],
        [LIST_PETS_OPERATION, "variables: ['petsTable',", "variables: ['photosBucket', 'petsTable',"],
      ] as const;
      const originals = await Promise.all(edits.map(([file]) => checkout.read(file)));
      for (const [index, [file, from, to]] of edits.entries()) {
        const edited = originals[index]!.replace(from, to);
        expect(edited, file).not.toBe(originals[index]);
        await checkout.write(file, edited);
      }
      // Told at once, before any request, as start-up would have told it.
      await expect
        .poll(() => failureReports(server.output()).find((report) => report.phase === 'config'), { timeout: 30_000 })
        .toEqual({
          level: 'ERROR',
          function: 'listPets',
          phase: 'config',
          message: 'listPets will refuse its configuration at its next cold start: PET_PHOTOS_BUCKET is required',
        });
      const { answer, report } = await failureAfterEdit(
        (report) => report.phase === 'init' && report.message.includes('PET_PHOTOS_BUCKET'),
      );
      expect(answer).toEqual({ status: 500, body: { message: 'Internal Server Error' } });
      expect(report).toMatchObject({ level: 'ERROR', function: 'listPets', phase: 'init' });
      expect(report.message).toContain('Invalid configuration: PET_PHOTOS_BUCKET is required');

      for (const [index, [file]] of [...edits.entries()].reverse()) await checkout.write(file, originals[index]!);
      await expect.poll(async () => (await listPets()).status, { timeout: 30_000, interval: 500 }).toBe(200);
    },
    DEV_TEST_TIMEOUT,
  );
});

describe('npm run dev, when the route table or the CORS policy changes', () => {
  let checkout: TemporaryCheckout;
  let server: RunningServer;
  beforeAll(async () => {
    checkout = await createTemporaryCheckout();
    server = await startServerProcess({ CORS_ALLOW_ORIGINS: BROWSER_ORIGIN }, { cwd: checkout.root, watch: true });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await checkout?.remove();
  });

  const get = async (path: string) => {
    const response = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it(
    'serves a route at its new path at once, and its method at the old path is gone, with no answer contradicting another',
    async () => {
      const created = await fetch(`${server.baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Moved', categoryId: 1 }),
      });
      const { id } = (await created.json()) as { id: unknown };
      expect((await get(`/pets/${id}`)).status).toBe(200);
      expect((await get(`/animals/${id}`)).status).toBe(404);

      const table = await checkout.read(GET_PET_OPERATION);
      const moved = table.replace("path: '/pets/{petId}'", "path: '/animals/{petId}'");
      expect(moved).not.toBe(table);
      await checkout.write(GET_PET_OPERATION, moved);

      await expect.poll(async () => (await get(`/animals/${id}`)).status, { timeout: 30_000, interval: 500 }).toBe(200);
      expect((await get(`/animals/${id}`)).body).toMatchObject({ id, name: 'Moved' });
      // What still serves the old path: nothing, 404; another operation's method, 405 naming it.
      const staying = (routes as readonly Route[])
        .filter((route) => route.path === '/pets/{petId}' && route.operationId !== 'getPet')
        .map((route) => route.method);
      const old = await get(`/pets/${id}`);
      expect(old).toEqual(
        staying.length === 0
          ? {
              status: 404,
              body: expect.objectContaining({ code: 'not_found', message: expect.stringContaining(`No route matches GET /v1/pets/${id}`) }),
            }
          : { status: 405, body: expect.objectContaining({ code: 'method_not_allowed' }) },
      );
      const document = (await (await fetch(server.docsUrl.replace(/\/docs$/, '/openapi.json'))).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      expect(Object.keys(document.paths['/animals/{petId}'] ?? {})).toEqual(['get']);
      expect(Object.keys(document.paths['/pets/{petId}'] ?? {})).toEqual(staying.map((method) => method.toLowerCase()));
    },
    DEV_TEST_TIMEOUT,
  );

  it(
    "answers a browser's preflight by the CORS policy as it now is",
    async () => {
      const preflight = async () => {
        const response = await fetch(`${server.baseUrl}/pets`, {
          method: 'OPTIONS',
          headers: { origin: BROWSER_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-pet-note' },
        });
        return response.headers.get('access-control-allow-headers')?.split(',') ?? [];
      };
      expect(await preflight()).not.toContain('x-pet-note');
      const policy = await checkout.read(CORS_POLICY);
      const allowing = policy.replace("['authorization', 'content-type',", "['authorization', 'content-type', 'x-pet-note',");
      expect(allowing).not.toBe(policy);
      await checkout.write(CORS_POLICY, allowing);
      await expect.poll(preflight, { timeout: 30_000, interval: 500 }).toContain('x-pet-note');
    },
    DEV_TEST_TIMEOUT,
  );
});

describe('npm run invoke, when a function fails to build or load', () => {
  let checkout: TemporaryCheckout;
  let original: string;
  beforeAll(async () => {
    checkout = await createTemporaryCheckout();
    original = await checkout.read(LIST_PETS);
  });
  afterAll(() => checkout?.remove());

  const invoke = () =>
    runCli(
      'local/invoke.ts',
      ['listPets', 'local/events/list-pets.json'],
      { DYNAMODB_PORT: String(CLOSED_PORT) },
      undefined,
      checkout.root,
    );

  it(
    "prints esbuild's message with the file, line and column, and fails",
    async () => {
      const text = `${original}export const broken = ;\n`;
      await checkout.write(LIST_PETS, text);
      const result = await invoke();
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `Invocation failed: listPets did not build: ${LIST_PETS}:${text.split('\n').length - 1}:22: ERROR: Unexpected ";"`,
      );
    },
    DEV_TEST_TIMEOUT,
  );

  it(
    'prints what the module threw, where in the TypeScript source, and its stack, and fails',
    async () => {
      await checkout.write(LIST_PETS, `throw new Error('the pets are out');\n${original}`);
      const result = await invoke();
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Invocation failed: listPets failed while loading: Error: the pets are out (${LIST_PETS}:1:7)`);
      expect(thrownLines(result.stderr)[0]?.stackTrace[1]).toContain(`${checkout.root}/${LIST_PETS}:1:7`);
    },
    DEV_TEST_TIMEOUT,
  );
});
