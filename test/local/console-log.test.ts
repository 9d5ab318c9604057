import { describe, expect, it } from 'vitest';
import { createConsoleLog, type LogFormat, logFormatFrom, showMetricsFrom } from '../../local/console-log';
import type { OutputStream } from '../../shared/runtime/output';
import { runCli, startServerProcess } from '../helpers/cli';
import { startServerInProcess } from '../helpers/server-in-process';
import { CLOSED_PORT } from '../../local/addresses';

/** What the console shows for `lines`, each written to the stream it names. */
function shown(format: LogFormat, lines: ReadonlyArray<[OutputStream, unknown]>, showMetrics = false) {
  const written: Array<[OutputStream, string]> = [];
  const log = createConsoleLog({ format, showMetrics, write: (stream, line) => written.push([stream, line]) });
  for (const [stream, line] of lines) log(stream, typeof line === 'string' ? line : JSON.stringify(line));
  return written;
}

const REQUEST_ID = '8f6c1f5e-0b7a-4c59-9d2a-3f1e2d4c5b6a';
const start = {
  time: '2026-11-25T12:00:00.000Z',
  type: 'platform.start',
  function: 'getPet',
  record: { requestId: REQUEST_ID, version: '$LATEST' },
};
const report = (metrics: Record<string, number>, status = 'success') => ({
  time: '2026-11-25T12:00:00.020Z',
  type: 'platform.report',
  function: 'getPet',
  record: {
    requestId: REQUEST_ID,
    status,
    metrics: { durationMs: 12.5, billedDurationMs: 13, memorySizeMB: 256, maxMemoryUsedMB: 31, ...metrics },
  },
});
const accessLine = {
  requestId: 'abcDEF123=',
  ip: '127.0.0.1',
  requestTime: '2026-11-25T12:00:00.000Z',
  httpMethod: 'GET',
  path: '/v1/pets/42',
  protocol: 'HTTP/1.1',
  status: 404,
  responseLength: 60,
  responseLatency: 21,
};
const metricDocument = {
  _aws: {
    Timestamp: 1,
    CloudWatchMetrics: [{ Namespace: 'AnimalStore', Dimensions: [['service']], Metrics: [{ Name: 'ColdStart', Unit: 'Count' }] }],
  },
  requestId: 'abcDEF123=',
  service: 'animal-store',
  ColdStart: 1,
};

describe('the pretty console', () => {
  it('shows one line per request: method, path, status, duration and the function its route invokes', () => {
    expect(shown('pretty', [['stdout', accessLine]])).toEqual([['stdout', 'GET /v1/pets/42 404 21 ms  getPet']]);
    expect(shown('pretty', [['stdout', { ...accessLine, path: '/v1/nowhere' }]])[0]![1]).toMatch(/ routeNotFound$/);
  });

  it("shows Lambda's START and REPORT lines, the init duration only when there was one, and a status other than success", () => {
    const lines = shown('pretty', [
      ['stdout', start],
      ['stdout', report({ initDurationMs: 412.25 })],
      ['stdout', report({}, 'timeout')],
    ]).map(([, line]) => line);
    expect(lines).toEqual([
      `START getPet RequestId: ${REQUEST_ID} Version: $LATEST`,
      `REPORT getPet RequestId: ${REQUEST_ID}  Duration: 12.5 ms  Billed Duration: 13 ms  Memory Size: 256 MB  Max Memory Used: 31 MB  Init Duration: 412.25 ms`,
      `REPORT getPet RequestId: ${REQUEST_ID}  Duration: 12.5 ms  Billed Duration: 13 ms  Memory Size: 256 MB  Max Memory Used: 31 MB  Status: timeout`,
    ]);
  });

  it("shows a logger's error with its level, function, message and keys on one line, then its stack and its cause's, indented", () => {
    const error = new TypeError('pets table missing', { cause: new RangeError('no such table') });
    const entry = {
      level: 'ERROR',
      message: 'Request failed',
      timestamp: '2026-11-25T12:00:00.000Z',
      service: 'animal-store',
      cold_start: true,
      function_name: 'animal-store-local-getPet',
      function_request_id: REQUEST_ID,
      requestId: 'abcDEF123=',
      keyId: 'key_1',
      error: { name: error.name, message: error.message, stack: error.stack, cause: { name: 'RangeError', message: 'no such table' } },
    };
    const [first, ...rest] = shown('pretty', [['stderr', entry]]);
    const [stream, head] = first!;
    expect(stream).toBe('stderr');
    expect(head).toBe('ERROR getPet Request failed  requestId=abcDEF123=  keyId=key_1');
    expect(rest.map(([, line]) => line)).toEqual([
      '    TypeError: pets table missing',
      // Relative to the project, as an editor opens it.
      expect.stringMatching(/^ {4}at (.* \()?test\/local\/console-log\.test\.ts:\d+:\d+\)?$/),
      ...rest.slice(2, -1).map(() => expect.stringMatching(/^ {4}at /)),
      '    Caused by: RangeError: no such table',
    ]);
  });

  it("shows a failure the server reports ({ level, message, function }) and the runtime's own error line, naming the invocation's function", () => {
    const reported = {
      level: 'ERROR',
      message: 'listPets failed to build',
      function: 'listPets',
      location: 'functions/list-pets.ts:3:22',
    };
    const uncaught = {
      timestamp: '2026-11-25T12:00:00.000Z',
      level: 'ERROR',
      requestId: REQUEST_ID,
      errorType: 'Error',
      errorMessage: 'boom',
      stackTrace: ['Error: boom', '    at handler (functions/get-pet.ts:12:9)'],
    };
    const lines = shown('pretty', [
      ['stderr', reported],
      ['stdout', start],
      ['stderr', uncaught],
    ]).map(([, line]) => line);
    expect(lines).toEqual([
      'ERROR listPets listPets failed to build  location=functions/list-pets.ts:3:22',
      `START getPet RequestId: ${REQUEST_ID} Version: $LATEST`,
      'ERROR getPet Error: boom',
      '    at handler (functions/get-pet.ts:12:9)',
    ]);
  });

  it('hides metric documents unless asked, then shows the values they publish', () => {
    expect(shown('pretty', [['stdout', metricDocument]])).toEqual([]);
    expect(shown('pretty', [['stdout', metricDocument]], true)).toEqual([['stdout', 'METRIC ColdStart=1 Count']]);
  });

  it('passes on lines that are not JSON objects as they are', () => {
    expect(
      shown('pretty', [
        ['stderr', 'Warning: something'],
        ['stdout', '[1,2]'],
      ]),
    ).toEqual([
      ['stderr', 'Warning: something'],
      ['stdout', '[1,2]'],
    ]);
  });
});

describe('the JSON console', () => {
  it('passes every line on unchanged, metric documents included', () => {
    const lines: Array<[OutputStream, unknown]> = [
      ['stdout', start],
      ['stdout', accessLine],
      ['stdout', metricDocument],
    ];
    expect(shown('json', lines)).toEqual(lines.map(([stream, line]) => [stream, JSON.stringify(line)]));
  });
});

describe('LOG_FORMAT and LOG_METRICS', () => {
  it('read pretty on a terminal and JSON otherwise, unless LOG_FORMAT says which', () => {
    expect(logFormatFrom('LOG_FORMAT', undefined, true)).toBe('pretty');
    expect(logFormatFrom('LOG_FORMAT', '', false)).toBe('json');
    expect(logFormatFrom('LOG_FORMAT', 'JSON', true)).toBe('json');
    expect(logFormatFrom('LOG_FORMAT', 'pretty', false)).toBe('pretty');
    expect(showMetricsFrom('LOG_METRICS', undefined)).toBe(false);
    expect(showMetricsFrom('LOG_METRICS', '1')).toBe(true);
  });

  it('refuse to start the server with a bad value, one line each', async () => {
    const result = await startServerInProcess({ LOG_FORMAT: 'text', LOG_METRICS: 'yes' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Could not start the local API: LOG_FORMAT must be pretty or json, got "text"\n');
    expect(result.stderr).toContain('Could not start the local API: LOG_METRICS must be 1 or 0, got "yes"\n');
  });
});

describe('npm start', () => {
  /** Starts the server with `env`, sends two GET /v1/pets, and returns its console once both are logged (two `requestLine`s). */
  async function consoleAfterTwoRequests(env: Record<string, string>, requestLine: RegExp): Promise<string[]> {
    // The functions publish their metrics, as they do under a developer's npm start (the unit tests turn them off).
    const server = await startServerProcess({ POWERTOOLS_METRICS_DISABLED: 'false', SYSTEM_LOG_LEVEL: 'INFO', ...env });
    try {
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      // The access-log line follows the answer: wait for the second.
      await expect
        .poll(
          () =>
            server
              .output()
              .split('\n')
              .filter((line) => requestLine.test(line)).length,
        )
        .toBe(2);
      return server.output().split('\n');
    } finally {
      await server.stop();
    }
  }

  it('writes raw JSON with LOG_FORMAT=json: the access log and platform lines as Lambda writes them, metric documents included', async () => {
    const lines = await consoleAfterTwoRequests({ LOG_FORMAT: 'json' }, /"path":"\/v1\/pets"/);
    const entries = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>);
    const requests = entries.filter((entry) => entry.httpMethod === 'GET');
    expect(requests.map((entry) => [entry.path, entry.status])).toEqual([
      ['/v1/pets', 200],
      ['/v1/pets', 200],
    ]);
    const reports = entries.filter((entry) => entry.type === 'platform.report' && entry.function === 'listPets');
    expect(reports).toHaveLength(2);
    expect(reports[0]!.record.metrics).toEqual(
      expect.objectContaining({ durationMs: expect.any(Number), initDurationMs: expect.any(Number) }),
    );
    expect(entries.some((entry) => '_aws' in entry)).toBe(true);
    expect(lines.some((line) => /^(START|REPORT) /.test(line))).toBe(false);
  });

  it('writes for people with LOG_FORMAT=pretty: START and REPORT per invocation, init duration on the cold start, one line per request', async () => {
    const lines = await consoleAfterTwoRequests({ LOG_FORMAT: 'pretty' }, /^GET \/v1\/pets /);
    const listPets = lines.filter((line) => / listPets RequestId: /.test(line));
    expect(listPets.map((line) => line.split(' ')[0])).toEqual(['START', 'REPORT', 'START', 'REPORT']);
    const [cold, warm] = listPets.filter((line) => line.startsWith('REPORT'));
    expect(cold).toMatch(
      /Duration: [\d.]+ ms {2}Billed Duration: \d+ ms {2}Memory Size: \d+ MB {2}Max Memory Used: \d+ MB {2}Init Duration: [\d.]+ ms$/,
    );
    expect(warm).not.toContain('Init Duration');
    expect(lines.filter((line) => line.startsWith('GET /v1/pets'))).toEqual([
      expect.stringMatching(/^GET \/v1\/pets 200 \d+ ms {2}listPets$/),
      expect.stringMatching(/^GET \/v1\/pets 200 \d+ ms {2}listPets$/),
    ]);
    expect(lines.some((line) => line.startsWith('{') || line.startsWith('METRIC'))).toBe(false);
  });

  it('shows the metric documents with LOG_METRICS=1', async () => {
    const lines = await consoleAfterTwoRequests({ LOG_FORMAT: 'pretty', LOG_METRICS: '1' }, /^GET \/v1\/pets /);
    expect(lines).toContain('METRIC ColdStart=1 Count');
  });
});

describe('npm run invoke', () => {
  it("prints the result alone on stdout, and the function's START and REPORT lines on stderr", async () => {
    const result = await runCli('local/invoke.ts', ['listPets', 'local/events/list-pets.json'], {
      DYNAMODB_PORT: String(CLOSED_PORT),
      LOG_FORMAT: 'pretty',
      SYSTEM_LOG_LEVEL: 'INFO',
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ statusCode: 200 });
    const lines = result.stderr.split('\n').filter((line) => / listPets RequestId: /.test(line));
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['START', 'REPORT']);
    expect(lines[1]).toContain('Init Duration: ');
  });
});
