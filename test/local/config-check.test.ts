import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { functionConfigProblems } from '../../local/config-check';
import { createFunctionRuntime } from '../../local/functions';
import { startLocalApi } from '../../local/local-api';
import { FUNCTIONS_DIR, PROJECT_ROOT } from '../../shared/facts/project-layout';
import { ENV } from '../../shared/facts/environment';
import { API_FUNCTIONS, fileNameOf, type ApiFunctionName } from '../../shared/facts/function-names';
import { snapshotEnv } from '../helpers/env';
import { captureOutput } from '../helpers/output';

/** What the local stage gives every function, valid throughout; each case below spoils some of it. */
const VALID = {
  [ENV.petsTable]: 'config-pets',
  [ENV.apiKeysTable]: 'config-api-keys',
  [ENV.idempotencyTable]: 'config-idempotency',
  [ENV.cursorSecret]: 'a-cursor-secret-of-at-least-32-characters',
  [ENV.listingShards]: '8',
  [ENV.writeShards]: '8',
  [ENV.metricsNamespace]: 'AnimalStore/config-test',
  [ENV.logLevel]: 'SILENT',
  AWS_REGION: 'eu-west-1',
};

const CASES: ReadonlyArray<[string, Record<string, string | undefined>]> = [
  ['a valid environment', {}],
  ['a cursor secret shorter than 32 characters', { [ENV.cursorSecret]: 'too-short' }],
  ['a log level the logger does not know', { [ENV.logLevel]: 'VERBOSE' }],
  ['no table name', { [ENV.petsTable]: undefined, [ENV.apiKeysTable]: undefined, [ENV.idempotencyTable]: undefined }],
  ['metrics on without a namespace', { [ENV.metricsNamespace]: undefined, [ENV.metricsDisabled]: 'false' }],
  ['metrics off without a namespace', { [ENV.metricsNamespace]: undefined, [ENV.metricsDisabled]: 'true' }],
  ['a blank log level and a cursor secret of 31 characters', { [ENV.logLevel]: ' ', [ENV.cursorSecret]: 'x'.repeat(31) }],
];

let restoreEnv: (() => void) | undefined;
afterEach(() => {
  restoreEnv?.();
  restoreEnv = undefined;
  vi.resetModules();
});

/** What the handler's module throws as it loads in `env` (its cold start), or undefined when it loads. */
async function coldStartError(handler: ApiFunctionName, env: Record<string, string | undefined>): Promise<string | undefined> {
  restoreEnv = snapshotEnv();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  vi.resetModules();
  try {
    await import(pathToFileURL(join(PROJECT_ROOT, FUNCTIONS_DIR, `${fileNameOf(handler)}.ts`)).href);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    restoreEnv();
    restoreEnv = undefined;
  }
}

describe.each(API_FUNCTIONS)('the local check of %s', (handler) => {
  it.each(CASES)('refuses exactly what the function refuses at its cold start, given %s', async (_, spoiled) => {
    const env = { ...VALID, ...spoiled };
    const local = functionConfigProblems((name) => (name === handler ? env : VALID));
    const coldStart = await coldStartError(handler, env);
    if (local.length === 0) {
      expect(coldStart).toBeUndefined();
      return;
    }
    // The logger reads its level as its module loads, before the handler reads the rest: a function
    // whose level is bad names that alone, where the local check names every bad variable at once.
    const named = /^Invalid configuration: (.+)$/.exec(coldStart ?? '')?.[1]?.split('; ') ?? [];
    expect(named.length).toBeGreaterThan(0);
    expect(local).toEqual(expect.arrayContaining(named));
    if (!(ENV.logLevel in spoiled)) expect(named).toEqual(local);
  });
});

describe('startLocalApi', () => {
  it('rejects, before starting anything, a configuration a function would refuse: one line per variable and its rule', async () => {
    const started = startLocalApi({
      port: 0,
      dynamoDbPort: 0,
      cursorSecret: 'too-short',
      functionEnvironment: (handler) => (handler === 'authorizer' ? { [ENV.logLevel]: 'VERBOSE' } : undefined),
    });
    await expect(started).rejects.toThrow(
      new Error(
        [
          'CURSOR_SECRET must be at least 32 characters',
          'POWERTOOLS_LOG_LEVEL must be one of DEBUG, INFO, WARN, ERROR, SILENT, TRACE, CRITICAL',
        ].join('\n'),
      ),
    );
  });
});

describe('a local function whose cold start refuses its configuration', () => {
  it('fails its invocation and says why in its log, as Lambda logs an initialization error', async () => {
    const runtime = await createFunctionRuntime({ environment: { ...VALID, [ENV.cursorSecret]: 'too-short' } });
    const output = captureOutput({ silent: true });
    try {
      await expect(runtime.invoke('listPets', {})).rejects.toThrow('Invalid configuration: CURSOR_SECRET must be at least 32 characters');
    } finally {
      output.stop();
      await runtime.close();
    }
    const logged = output.json().find((entry) => entry.level === 'ERROR');
    expect(logged).toMatchObject({ errorMessage: 'Invalid configuration: CURSOR_SECRET must be at least 32 characters' });
    expect(output.byStream.stderr.join('\n')).toContain('CURSOR_SECRET must be at least 32 characters');
  });
});
