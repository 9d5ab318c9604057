import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { ENV } from '../../shared/facts/environment';
import { writeLine } from '../../shared/runtime/output';
import { routeFunctionsOnly, startTestApi, storeOutage, type TestApi } from '../helpers/local-api';
import { captureOutput, type CapturedOutput } from '../helpers/output';
import { apiKeyStore, postPet } from '../helpers/pets';

const DEV_KEY = 'logs-dev-key-0123456789abcdef';
const UNKNOWN_KEY = 'pets_unknownKeyThatMustNotBeLogged0123456789';
const BASIC_CREDENTIALS = 'c2VjcmV0LXVzZXI6c2VjcmV0LXBhc3N3b3Jk';

let api: TestApi;
let output: CapturedOutput;
let issuedKey: string;
/** apigw-requestid of the responses whose failure must be logged. */
const failed: Record<'internal' | 'unavailable', string> = { internal: '', unavailable: '' };
/** The keyId each of a burst of failing requests was sent with, by its apigw-requestid. */
const burst = new Map<string, string>();

beforeAll(async () => {
  // Every function logs everything it can.
  const debug = { [ENV.logLevel]: 'DEBUG' };
  const accessLog = (line: string) => writeLine('stdout', line);
  // Lambda's START and REPORT lines too, which the tests' SYSTEM_LOG_LEVEL leaves out elsewhere.
  const systemLogLevel = 'INFO';
  api = await startTestApi({ devApiKey: DEV_KEY, accessLog, systemLogLevel, functionEnvironment: () => debug });
  issuedKey = (await issueApiKey(apiKeyStore(api.documents), 'logs test')).apiKey;
  // Two more stages of the API, each with a route function that fails: its table is missing, its DynamoDB unreachable.
  const missingTable = await startTestApi({
    devApiKey: DEV_KEY,
    accessLog,
    systemLogLevel,
    functionEnvironment: routeFunctionsOnly({ [ENV.petsTable]: 'animal-store-local-missing-table' }, debug),
  });
  const unreachable = await startTestApi({
    devApiKey: DEV_KEY,
    accessLog,
    systemLogLevel,
    functionEnvironment: storeOutage(debug),
  });

  output = captureOutput({ silent: true });
  try {
    expect((await api.request('/nope')).status).toBe(404);

    const internal = await missingTable.request('/pets/1');
    expect(internal.status).toBe(500);
    failed.internal = internal.headers.get('apigw-requestid')!;

    // Requests of two clients at once, each failing: every error line must name its own request and key.
    const clients = await Promise.all(['burst a', 'burst b'].map((name) => issueApiKey(apiKeyStore(missingTable.documents), name)));
    const answers = await Promise.all(
      Array.from({ length: 8 }, async (_, index) => {
        const { apiKey, record } = clients[index % 2]!;
        const response = await missingTable.request(`/pets/${index + 1}`, { headers: { authorization: `Bearer ${apiKey}` } });
        await response.arrayBuffer();
        burst.set(response.headers.get('apigw-requestid')!, record.keyId);
        return response.status;
      }),
    );
    expect(answers).toEqual(Array(8).fill(500));

    const unavailable = await unreachable.request('/pets');
    expect(unavailable.status).toBe(503);
    failed.unavailable = unavailable.headers.get('apigw-requestid')!;

    const sends: Array<() => Promise<Response>> = [
      () => postPet(api, { name: 'Logged', categoryId: 1 }),
      () => postPet(api, '{'),
      () => postPet(api, '{}', { 'content-type': 'text/plain' }),
      () => postPet(api, ' '.repeat(20_000)),
      () => api.request('/pets', { method: 'DELETE' }),
      () => api.request('/nope', { headers: { authorization: `Bearer ${issuedKey}` } }), // allowed: 404
      () => api.request('/pets', { anonymous: true }),
      () => api.request('/pets', { headers: { authorization: `Bearer ${UNKNOWN_KEY}` } }),
      () => api.request('/pets', { headers: { authorization: `Basic ${BASIC_CREDENTIALS}` } }),
      () => api.request('/nope', { headers: { authorization: `Bearer ${UNKNOWN_KEY}x` } }),
      () => api.request('/pets/1', { headers: { authorization: `bearer ${DEV_KEY.toUpperCase()}` } }),
    ];
    for (const send of sends) await (await send()).arrayBuffer();
  } finally {
    output.stop();
    await missingTable.close();
    await unreachable.close();
  }
});

afterAll(async () => {
  await api?.close();
});

describe('logs', () => {
  it('are JSON lines, each carrying a request id', () => {
    const lines = output.lines.filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      // Lambda's platform lines (START, REPORT) carry the invocation's in their record.
      const requestId = entry.requestId ?? (entry.record as { requestId?: unknown } | undefined)?.requestId;
      expect(typeof requestId, line).toBe('string');
      expect(requestId, line).not.toBe('');
    }
  });

  it.each(['internal', 'unavailable'] as const)('record the %s failure under its request id', (kind) => {
    const entries = output.json().filter((entry) => entry.requestId === failed[kind] && 'level' in entry);
    expect(entries.some((entry) => entry.level === 'ERROR' || entry.level === 'WARN')).toBe(true);
  });

  it("name an outage's error and its cause without their stacks, and keep an unexpected error's stack", () => {
    const line = (kind: 'internal' | 'unavailable') =>
      output.json().find((entry) => entry.requestId === failed[kind] && (entry.level === 'ERROR' || entry.level === 'WARN'))!;
    const outage = line('unavailable');
    expect(outage).toMatchObject({ level: 'WARN', message: 'Dependency unavailable', error: { name: 'StoreUnavailableError' } });
    expect((outage.error as { cause: unknown }).cause).toMatchObject({ name: expect.any(String), message: expect.any(String) });
    expect(JSON.stringify(outage)).not.toContain('"stack"');
    expect(line('internal')).toMatchObject({ level: 'ERROR', error: { stack: expect.stringMatching(/\n\s+at /) } });
  });

  it("carry each concurrent request's own requestId and keyId on its error line", () => {
    const failures = output.json().filter((entry) => entry.message === 'Request failed' && burst.has(entry.requestId as string));
    expect(failures.map((entry) => entry.requestId).sort()).toEqual([...burst.keys()].sort());
    for (const entry of failures) expect(entry.keyId, JSON.stringify(entry)).toBe(burst.get(entry.requestId as string));
  });

  it('never contain an API key, credentials or an Authorization header', () => {
    const text = output.lines.join('\n');
    for (const secret of [DEV_KEY, DEV_KEY.toUpperCase(), issuedKey, UNKNOWN_KEY, BASIC_CREDENTIALS]) {
      expect(text.includes(secret), `a log line contains ${secret.slice(0, 6)}…`).toBe(false);
    }
    expect(text).not.toMatch(/"authorization"\s*:/i);
    expect(text).not.toMatch(/\b(?:Bearer|Basic) [A-Za-z0-9]/i);
  });
});
