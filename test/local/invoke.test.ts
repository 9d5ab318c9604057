import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTIONS, fileNameOf, type ApiFunctionName } from '../../shared/facts/function-names';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { ERROR_CODES } from '../../shared/facts/error-codes';
import { findRoute, OPERATION_IDS, pathParameterNames, type OperationId } from '../../shared/facts/routes';
import { runCli, startServerProcess, type RunningServer } from '../helpers/cli';
import { invokeInProcess } from '../helpers/invoke-in-process';
import { CLOSED_PORT } from '../../local/addresses';
import { ensureNoFunctionNamed } from '../helpers/unknown-function-name';

/** The invocation's result: what invoke prints on stdout after its notes. */
function resultOf(stdout: string): { statusCode?: number; body?: string; isAuthorized?: boolean; context?: Record<string, string> } {
  return JSON.parse(stdout.slice(stdout.indexOf('{\n')));
}

/**
 * What each function's sample event gets on a throwaway store. An operation's (written by npm run generate) is its
 * success, unless its path names a pet: pet 1 is in no throwaway store.
 */
const SAMPLE_RESULTS = {
  ...(Object.fromEntries(
    OPERATION_IDS.map((operationId) => {
      const { path, successStatus } = findRoute(operationId);
      return [operationId, { statusCode: pathParameterNames(path).length > 0 ? ERROR_CODES.not_found : successStatus }];
    }),
  ) as Record<OperationId, ReturnType<typeof resultOf>>),
  // The sample's method is one no route serves at its path.
  routeNotFound: { statusCode: 405 },
  // invoke issues a key for the sample's placeholder.
  authorizer: { isAuthorized: true, context: { outcome: 'allowed' } },
} satisfies Record<ApiFunctionName, ReturnType<typeof resultOf>>;

/** What invoke says of a name that is not a function's: every function it can invoke, by name. */
const unknownFunction = (name: string) => `Unknown function "${name}"; the functions are ${API_FUNCTIONS.join(', ')}.`;
const NOT_A_FUNCTION = ensureNoFunctionNamed('adoptPet');

// Invoke runs in this process through its seam (runInvoke); it is spawned only where the process is what a test
// is about: its exit status and streams end to end, and a setting given in the shell.
describe('npm run invoke takes the names the README uses', () => {
  const invoke = (...args: string[]) => invokeInProcess(args);

  it.each(API_FUNCTIONS)('invokes %s with its sample event', async (name) => {
    const result = await invoke(name, `local/events/${fileNameOf(name)}.json`);
    expect(result.code, result.stderr).toBe(0);
    expect(resultOf(result.stdout)).toMatchObject(SAMPLE_RESULTS[name]);
  });

  // The README and docs/ name none of them: they send the reader here.
  it('lists every function it takes, by name, in its --help', async () => {
    const result = await invoke('--help');
    expect(result.code, result.stderr).toBe(0);
    expect(/^ {2}<function> +(.+)$/m.exec(result.stdout)?.[1]?.split(', ')).toEqual([...API_FUNCTIONS]);
  });

  it.each([
    [
      'a missing event file',
      ['getPet', 'local/events/no-such-event.json'],
      'Cannot read the event file local/events/no-such-event.json: no such file',
    ],
    ['an event file that is not JSON', ['getPet', 'README.md'], 'README.md is not JSON: '],
    ['an event that is not an object', ['getPet', '-'], 'The event on standard input must hold a JSON object (an event)'],
    ['an unknown function', [NOT_A_FUNCTION, 'local/events/get-pet.json'], unknownFunction(NOT_A_FUNCTION)],
    [
      'the file name of a function, which is not its name',
      [fileNameOf('listPets'), 'local/events/list-pets.json'],
      unknownFunction(fileNameOf('listPets')),
    ],
  ])('answers %s with one line and exit 2, without a stack', async (_, args, line) => {
    const result = await invokeInProcess(args, {}, '[1, 2]');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(line)]);
    expect(result.stdout).toBe('');
  });
});

describe('the sample events on a fresh npm start', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(() => server?.stop());
  const invoke = (...args: string[]) => invokeInProcess(args, { DYNAMODB_PORT: server.dynamoDbPort });

  it('createPet creates a pet, which getPet reads with its id as --path-parameter and the API serves', async () => {
    const created = await invoke('createPet', 'local/events/create-pet.json');
    expect(resultOf(created.stdout).statusCode).toBe(201);
    const { id } = JSON.parse(resultOf(created.stdout).body!) as { id: number };

    const read = await invoke('getPet', 'local/events/get-pet.json', '--path-parameter', `petId=${id}`);
    expect(resultOf(read.stdout).statusCode).toBe(200);
    const sample = JSON.parse(await readFile(join(PROJECT_ROOT, 'local/events/create-pet.json'), 'utf8')) as { body: string };
    expect(JSON.parse(resultOf(read.stdout).body!)).toEqual({ id, ...JSON.parse(sample.body) });
    const served = await fetch(`${server.baseUrl}/pets/${id}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(served.status).toBe(200);
  });

  it("finds npm start's store by DYNAMODB_ENDPOINT too, as npm start does, and says where", async () => {
    const endpoint = `http://127.0.0.1:${server.dynamoDbPort}`;
    const created = await invokeInProcess(['createPet', 'local/events/create-pet.json'], { DYNAMODB_ENDPOINT: endpoint });
    expect(created.stderr).toContain(`Using the running local API's DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)\n`);
    const { id } = JSON.parse(resultOf(created.stdout).body!) as { id: number };
    const served = await fetch(`${server.baseUrl}/pets/${id}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(served.status).toBe(200);
  });

  it("the authorizer accepts the sample's placeholder, replaced by a key issued for the invocation and revoked after it", async () => {
    const result = await invoke('authorizer', 'local/events/authorizer.json');
    expect(result.code, result.stderr).toBe(0);
    const { isAuthorized, context } = resultOf(result.stdout);
    expect(isAuthorized).toBe(true);
    expect(context).toMatchObject({ outcome: 'allowed', keyId: expect.stringMatching(/^key_/) });
    const keys = await runCli('tools/keys.ts', ['list', '--local'], { DYNAMODB_PORT: server.dynamoDbPort });
    expect(keys.stdout).toMatch(new RegExp(`${context!.keyId}.*revoked`));
  });
});

describe('npm run invoke on a throwaway store', () => {
  it('invokes createPet with the sample event and prints an API Gateway result, saying where it found no running store', async () => {
    const result = await runCli('local/invoke.ts', ['createPet', 'local/events/create-pet.json'], { DYNAMODB_PORT: String(CLOSED_PORT) });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `No local API's DynamoDB at http://127.0.0.1:${CLOSED_PORT} (DYNAMODB_PORT); using a throwaway in-memory one\n`,
    );
    const output = resultOf(result.stdout);
    expect(output.statusCode).toBe(201);
    const sample = JSON.parse(await readFile(join(PROJECT_ROOT, 'local/events/create-pet.json'), 'utf8')) as { body: string };
    expect(JSON.parse(output.body!)).toMatchObject(JSON.parse(sample.body));
  });

  it('invokes the authorizer, which reports an unknown key as invalid', async () => {
    const sample = await readFile(join(PROJECT_ROOT, 'local/events/authorizer.json'), 'utf8');
    const event = sample.replace('replace-with-your-dev-api-key', 'pets_neverIssuedAnywhere0123456789abcdefghijklmn');
    const result = await invokeInProcess(['authorizer', '-'], {}, event);
    expect(result.stdout).toContain('"outcome": "invalid"');
  });

  it('reads the event from standard input with -', async () => {
    const event = await readFile(join(PROJECT_ROOT, 'local/events/list-pets.json'), 'utf8');
    const result = await invokeInProcess(['listPets', '-'], {}, event);
    expect(result.stdout).toContain('"statusCode": 200');
  });

  it('refuses a function setting given in the shell, naming ENV_VARS, before invoking anything', async () => {
    const result = await runCli('local/invoke.ts', ['listPets', 'local/events/list-pets.json'], {
      DYNAMODB_PORT: String(CLOSED_PORT),
      PETS_LISTING_SHARDS: '8',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^PETS_LISTING_SHARDS is set in the shell, .*ENV_VARS file/m);
    expect(result.stdout).toBe('');
  });
});
