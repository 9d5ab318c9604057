import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EVERY_FUNCTION_KEY } from '../../local/env-vars';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import { startServerProcess } from '../helpers/cli';
import { invokeInProcess } from '../helpers/invoke-in-process';
import { startServerInProcess } from '../helpers/server-in-process';
import { ensureNoFunctionNamed } from '../helpers/unknown-function-name';

const folder = mkdtempSync(join(tmpdir(), 'animal-store-env-vars-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Writes an ENV_VARS file and returns its path. */
function envVarsFile(name: string, contents: unknown): string {
  const path = join(folder, name);
  writeFileSync(path, typeof contents === 'string' ? contents : JSON.stringify(contents));
  return path;
}

/** The lines npm start wrote to say why it did not start. */
const refusals = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('Could not start the local API: '));
const start = startServerInProcess;

/** What npm start and invoke say of an entry named for no function: every function an entry can name. */
const unknownFunction = (name: string) =>
  `unknown function "${name}"; the functions are ${API_FUNCTIONS.join(', ')} (or ${EVERY_FUNCTION_KEY}, for all)`;
/** Near misses of a function's name, as a typo makes them. */
const MISSPELT = ensureNoFunctionNamed('listPet');
const MISSPELT_TOO = ensureNoFunctionNamed('routeNotFund');

describe('npm start with ENV_VARS (per-function environment overrides)', () => {
  it("gives one function the variables its entry names, and leaves every other function's as they were", async () => {
    const file = envVarsFile('get-pet-elsewhere.json', { getPet: { PETS_TABLE_NAME: 'a-table-nobody-created' } });
    const server = await startServerProcess({ ENV_VARS: file });
    try {
      const headers = { authorization: `Bearer ${server.apiKey}` };
      expect(server.output()).toContain(`Overrides         ${file}`);
      expect((await fetch(`${server.baseUrl}/pets`, { headers })).status).toBe(200);
      // getPet now reads a table that does not exist: it fails where it would have answered 404.
      expect((await fetch(`${server.baseUrl}/pets/1`, { headers })).status).toBeGreaterThanOrEqual(500);
    } finally {
      await server.stop();
    }
  });

  it("puts the overridden values through the functions' own configuration check, naming the rule they break", async () => {
    const result = await start({ ENV_VARS: envVarsFile('verbose.json', { Parameters: { POWERTOOLS_LOG_LEVEL: 'verbose' } }) });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([expect.stringContaining('POWERTOOLS_LOG_LEVEL must be one of DEBUG, INFO')]);
    expect(result.stdout).not.toContain('Animal store API');
  });

  it.each([
    ['an unknown function', { [MISSPELT]: { POWERTOOLS_LOG_LEVEL: 'DEBUG' } }, unknownFunction(MISSPELT)],
    [
      'a variable the function does not read',
      { getPet: { CURSOR_SECRET: 'x'.repeat(32) } },
      'getPet reads no variable CURSOR_SECRET; it reads',
    ],
    ['a variable no function reads', { Parameters: { LOG_LEVEL: 'DEBUG' } }, 'Parameters.LOG_LEVEL is read by no function; they read'],
    [
      'a value that is not a string',
      { listPets: { POWERTOOLS_METRICS_DISABLED: true } },
      'listPets.POWERTOOLS_METRICS_DISABLED must be a string',
    ],
    ['a file that is not JSON', '{ "listPets": ', 'is not JSON'],
  ])('refuses, in one line naming the file, %s', async (name, contents, message) => {
    const file = envVarsFile(`${name.replaceAll(' ', '-')}.json`, contents);
    const result = await start({ ENV_VARS: file });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([expect.stringContaining(message)]);
    expect(refusals(result.stderr)[0]).toMatch(new RegExp(`^Could not start the local API: ${file.replaceAll('.', '\\.')}`));
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('names a file that does not exist', async () => {
    const result = await start({ ENV_VARS: join(folder, 'missing.json') });
    expect(refusals(result.stderr)).toEqual([`Could not start the local API: ${join(folder, 'missing.json')}: no such file`]);
  });
});

describe('npm run invoke with --env-vars', () => {
  const invoke = (...args: string[]) => invokeInProcess(args);

  it("lays the file's variables over the invoked function's environment", async () => {
    const file = envVarsFile('invoke-get-pet.json', { getPet: { PETS_TABLE_NAME: 'a-table-nobody-created' } });
    const result = await invoke('getPet', 'local/events/get-pet.json', '--env-vars', file);
    // getPet reads a table that does not exist: 500 where the sample otherwise gets 404.
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"statusCode": 500');
  });

  it('refuses an unknown function in the file in one line, exit 2, before invoking anything', async () => {
    const file = envVarsFile('invoke-unknown.json', { [MISSPELT_TOO]: {} });
    const result = await invoke('listPets', 'local/events/list-pets.json', '--env-vars', file);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(`${file}: ${unknownFunction(MISSPELT_TOO)}`);
  });
});
