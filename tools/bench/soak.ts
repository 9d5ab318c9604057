import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDynalite, type LocalDynamoDb } from '../../local/dynamodb-local';
import { ENV } from '../../src/facts/environment';
import { isDeployed } from './bench-functions';

/**
 * `npm run soak [-- <seconds>]`: drives the local API with mixed traffic (createPet with and without
 * Idempotency-Key, including replays; listPets; getPet; unauthenticated requests) for 60 s or the
 * given seconds, and prints errors, p50/p99 per operation and the server's memory at start and end.
 * What it looks for is what a short benchmark cannot show: a leak (per-request state kept by the
 * gateway, the function runtime or SDK clients) and errors that only appear under sustained load.
 *
 * The server runs as its own process (`node --import tsx local/server.ts`) so that its RSS, read
 * from /proc, is the API's alone: the load generator and dynalite, which keeps every created pet in
 * memory, live in this process. Start memory is taken after a warm-up, so that growth means
 * accumulation, not initialisation: cold starts, bundling, JIT, and above all V8 sizing its heap to
 * the load, which takes 20–30 s here (the committed heap grows from ~35 to ~200 MB while the live heap
 * after a full GC stays ~25–30 MB). A fixed 5 s warm-up would report that as a leak, so the warm-up
 * lasts at least 5 s (or 10 % of the duration) and then until RSS settles, at most 60 s.
 *
 * Exit code 0 when every operation answered only its expected status and memory stayed flat (end
 * RSS at most max(15 %, 32 MiB) above start); 1 otherwise, or on any failure. Bounded: it stops by
 * itself, and on Ctrl-C or a failure it stops the server and dynalite. Loopback only.
 */
const CONNECTIONS_PER_OPERATION = 2; // 4 operations × 2 = 8 connections, enough for 2 cores
const MIN_WARM_UP_SECONDS = 5; // or 10 % of the duration, if longer
const MAX_WARM_UP_SECONDS = 60; // a server whose RSS never settles is then measured, and fails
/** RSS has settled when it grew less than this over the last `window` one-second samples. */
const SETTLED = { window: 10, fraction: 0.02 };
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
const ALLOWED_GROWTH = { fraction: 0.15, bytes: 32 * 2 ** 20 };
const REPLAY_EVERY = 20; // every 20th keyed create re-sends the previous key and body
const BANNER = /^\s*Animal store API\s+(http:\/\/\S+\/v1)\s*$/;
const MiB = 2 ** 20;

interface Operation {
  readonly name: string;
  readonly expected: number;
  readonly headers: Record<string, string>;
  readonly requests: autocannon.Request[];
}

interface OperationReport {
  readonly name: string;
  readonly result: autocannon.Result;
  readonly errors: number;
  /** What the errors were, e.g. "3× 503, 2 socket errors/timeouts (1 timeouts)"; empty without errors. */
  readonly detail: string;
}

const stopped = new AbortController();
process.once('SIGINT', () => stopped.abort(new Error('Interrupted.')));

let dynamoDb: LocalDynamoDb | undefined;
let server: ChildProcess | undefined;
try {
  const seconds = readDuration();
  const minWarmUpSeconds = Math.max(MIN_WARM_UP_SECONDS, Math.round(seconds / 10));
  dynamoDb = await startDynalite({ port: 0 });
  const apiKey = `pets_${randomBytes(32).toString('base64url')}`;
  server = startServer(dynamoDb.endpoint, apiKey);
  const baseUrl = await waitForBaseUrl(server, AbortSignal.any([stopped.signal, AbortSignal.timeout(STARTUP_TIMEOUT_MS)]));
  const petId = await createPet(baseUrl, apiKey);
  const operations = defineOperations(baseUrl, apiKey, petId);

  const warmUp = await warmUpUntilSettled(baseUrl, operations, server.pid!, minWarmUpSeconds);
  const rss = startRssSampler(server.pid!);
  const reports = await runMix(baseUrl, operations, seconds);
  const memory = await rss.stop();

  console.log(
    `\nSoak: ${seconds} s of mixed traffic, server pid ${server.pid}, after ${warmUp.seconds} s of warm-up ` +
      `(${warmUp.settled ? 'RSS settled' : `RSS still growing after ${warmUp.seconds} s`})`,
  );
  printReport(reports, memory);
  process.exitCode = reports.some((report) => report.errors > 0) || !isFlat(memory) ? 1 : 0;
} catch (error) {
  process.stderr.write(`Soak failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  if (server) await stopServer(server);
  await dynamoDb?.close();
}

/** The positional argument, in whole seconds; 60 without one. */
function readDuration(): number {
  const { positionals } = parseArgs({ allowPositionals: true });
  if (positionals.length > 1) throw new Error('Usage: npm run soak [-- <seconds>]');
  const value = Number(positionals[0] ?? 60);
  if (!Number.isInteger(value) || value < 1) throw new Error(`The duration must be a whole number of seconds, got "${positionals[0]}"`);
  return value;
}

/**
 * Starts `local/server.ts` with tsx's loader inside node itself: the tsx binary would spawn another
 * process, and the pid whose memory is sampled must be the server's.
 */
function startServer(dynamoDbEndpoint: string, apiKey: string): ChildProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DYNAMODB_ENDPOINT: dynamoDbEndpoint,
    [ENV.logLevel]: 'WARN',
    DEV_API_KEY: apiKey,
  };
  delete env.DATA_DIR; // the server refuses it together with DYNAMODB_ENDPOINT
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A server that dies mid-run stops the load at once instead of hammering a closed port.
  child.once('exit', (code, signal) => stopped.abort(new Error(`The server exited (${signal ?? `code ${code}`}).`)));
  return child;
}

/**
 * Resolves with the base URL from the server's banner, on 127.0.0.1 rather than `localhost`, which
 * may resolve to ::1 where the server does not listen. The access log that follows on the same
 * stream is read and dropped: a pipe nobody reads would block the server once full.
 */
function waitForBaseUrl(child: ChildProcess, signal: AbortSignal): Promise<URL> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = BANNER.exec(line);
      if (!match) return;
      const url = new URL(match[1]!);
      url.hostname = '127.0.0.1';
      resolve(url);
    });
    child.once('error', reject);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** The pet getPet reads: one that exists, so the operation measures a hit. */
async function createPet(baseUrl: URL, apiKey: string): Promise<number> {
  const response = await fetch(`${baseUrl.href}/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'soak getPet', categoryId: 1, status: 'available' }),
    signal: stopped.signal,
  });
  if (response.status !== 201) throw new Error(`Creating the getPet pet answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: number }).id;
}

function defineOperations(baseUrl: URL, apiKey: string, petId: number): Operation[] {
  const pets = `${baseUrl.pathname}/pets`;
  const authorized = { authorization: `Bearer ${apiKey}` };
  return [
    {
      name: 'createPet',
      expected: 201,
      headers: { ...authorized, 'content-type': 'application/json' },
      requests: createPetRequests(pets),
    },
    {
      name: 'listPets',
      expected: 200,
      headers: authorized,
      requests: [{ path: `${pets}?limit=20` }, { path: `${pets}?limit=100&status=available` }],
    },
    ...(isDeployed('getPet') ? [{ name: 'getPet', expected: 200, headers: authorized, requests: [{ path: `${pets}/${petId}` }] }] : []),
    { name: 'anonymous', expected: 401, headers: {}, requests: [{ path: pets }] },
  ];
}

/**
 * One cycle of creates, repeated by each connection: alternately without and with a fresh
 * Idempotency-Key, and the cycle's last keyed request replays the one before it. The replay runs on
 * the same connection, after its original has been answered (one request at a time per connection),
 * so it must be a completed-record replay (201), never an in-progress 409. autocannon keeps the
 * context per connection and resets it each cycle, which is why the replay stays within one.
 */
function createPetRequests(path: string): autocannon.Request[] {
  type Context = { lastKeyed?: { key: string; body: string } };
  // Shared by all connections and both phases: every fresh create sends a body no other one does.
  let created = 0;
  const nextPetBody = () => {
    created += 1;
    return JSON.stringify({ name: `soak ${created}`, categoryId: 1 + (created % 7), status: 'available' });
  };
  const withKey = (request: autocannon.Request, key: string, body: string): autocannon.Request => ({
    ...request,
    body,
    headers: { ...request.headers, 'idempotency-key': key },
  });
  const unkeyed: autocannon.Request = { method: 'POST', path, setupRequest: (request) => ({ ...request, body: nextPetBody() }) };
  const keyed: autocannon.Request = {
    method: 'POST',
    path,
    setupRequest: (request, context) => {
      const lastKeyed = { key: randomUUID(), body: nextPetBody() };
      (context as Context).lastKeyed = lastKeyed;
      return withKey(request, lastKeyed.key, lastKeyed.body);
    },
  };
  const replay: autocannon.Request = {
    method: 'POST',
    path,
    setupRequest: (request, context) => {
      const { key, body } = (context as Context).lastKeyed!;
      return withKey(request, key, body);
    },
  };
  return [...Array.from({ length: REPLAY_EVERY - 1 }, () => [unkeyed, keyed]).flat(), unkeyed, replay];
}

/**
 * Runs the mix for at least `minSeconds` and then until the server's RSS has settled (see SETTLED),
 * at most MAX_WARM_UP_SECONDS; says how long it took and whether RSS settled.
 */
async function warmUpUntilSettled(
  baseUrl: URL,
  operations: Operation[],
  pid: number,
  minSeconds: number,
): Promise<{ seconds: number; settled: boolean }> {
  const samples: number[] = [];
  const settled = new AbortController();
  const started = Date.now();
  const timer = setInterval(() => {
    readRss(pid).then(
      (bytes) => {
        samples.push(bytes);
        if (samples.length >= minSeconds && hasSettled(samples)) settled.abort();
      },
      () => undefined,
    ); // a server gone mid-warm-up stops the run through `stopped`
  }, 1_000);
  try {
    await runMix(baseUrl, operations, Math.max(MAX_WARM_UP_SECONDS, minSeconds), settled.signal);
  } finally {
    clearInterval(timer);
  }
  return { seconds: Math.round((Date.now() - started) / 1_000), settled: settled.signal.aborted };
}

function hasSettled(samples: number[]): boolean {
  const before = samples.at(-1 - SETTLED.window);
  return before !== undefined && samples.at(-1)! <= before * (1 + SETTLED.fraction);
}

/**
 * Runs every operation at once, one autocannon instance each, so latency is per operation, for
 * `durationSeconds` or until `until` aborts.
 */
async function runMix(baseUrl: URL, operations: Operation[], durationSeconds: number, until?: AbortSignal): Promise<OperationReport[]> {
  stopped.signal.throwIfAborted();
  const instances: autocannon.Instance[] = [];
  const stopAll = () => {
    for (const instance of instances) instance.stop();
  };
  const stop = until ? AbortSignal.any([stopped.signal, until]) : stopped.signal;
  stop.addEventListener('abort', stopAll, { once: true });
  try {
    const results = await Promise.all(
      operations.map(
        (operation) =>
          new Promise<autocannon.Result>((resolve, reject) => {
            const options: autocannon.Options = {
              url: baseUrl.origin,
              title: operation.name,
              connections: CONNECTIONS_PER_OPERATION,
              duration: durationSeconds,
              headers: operation.headers,
              requests: operation.requests,
            };
            instances.push(autocannon(options, (error, result) => (error ? reject(error) : resolve(result))));
          }),
      ),
    );
    stopped.signal.throwIfAborted();
    return operations.map((operation, index) => report(operation, results[index]!));
  } finally {
    stop.removeEventListener('abort', stopAll);
  }
}

/** Errors are answers other than the expected status, plus socket errors and timeouts. */
function report(operation: Operation, result: autocannon.Result): OperationReport {
  const unexpected = Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => Number(status) !== operation.expected)
    .map(([status, { count = 0 }]) => ({ status, count }));
  const errors = unexpected.reduce((sum, { count }) => sum + count, 0) + result.errors;
  const detail = [
    ...unexpected.map(({ status, count }) => `${count}× ${status}`),
    ...(result.errors > 0 ? [`${result.errors} socket errors/timeouts (${result.timeouts} timeouts)`] : []),
  ].join(', ');
  return { name: operation.name, result, errors, detail };
}

interface Memory {
  readonly start: number;
  readonly end: number;
  readonly peak: number;
}

/** Samples the server's RSS now and every second; stop() takes the last sample. */
function startRssSampler(pid: number): { stop(): Promise<Memory> } {
  const samples: number[] = [];
  const first = readRss(pid).then((bytes) => samples.push(bytes));
  const timer = setInterval(() => {
    // A sample lost to a dying server is reported by the final one.
    readRss(pid).then(
      (bytes) => samples.push(bytes),
      () => undefined,
    );
  }, 1_000);
  return {
    async stop() {
      clearInterval(timer);
      await first;
      const end = await readRss(pid);
      return { start: samples[0]!, end, peak: Math.max(...samples, end) };
    },
  };
}

async function readRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`No VmRSS for the server (pid ${pid}).`);
  return Number(kib) * 1024;
}

function allowedGrowth(start: number): number {
  return Math.max(start * ALLOWED_GROWTH.fraction, ALLOWED_GROWTH.bytes);
}

function isFlat(memory: Memory): boolean {
  return memory.end - memory.start <= allowedGrowth(memory.start);
}

function printReport(reports: OperationReport[], memory: Memory): void {
  console.table(
    Object.fromEntries(
      reports.map(({ name, result, errors }) => [
        name,
        {
          requests: result.requests.total + result.errors,
          errors,
          'req/s': Math.round(result.requests.total / result.duration),
          'p50 ms': result.latency.p50,
          'p99 ms': result.latency.p99,
        },
      ]),
    ),
  );
  for (const { name, detail } of reports) if (detail) console.log(`  ${name} errors: ${detail}`);

  const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
  const growth = memory.end - memory.start;
  console.log(
    `Server RSS: start ${mib(memory.start)}, end ${mib(memory.end)}, peak ${mib(memory.peak)}, ` +
      `growth ${growth >= 0 ? '+' : '−'}${mib(Math.abs(growth))} (${((growth / memory.start) * 100).toFixed(1)} %; ` +
      `allowed +${mib(allowedGrowth(memory.start))})`,
  );
  const failed = reports.filter((report) => report.errors > 0).map((report) => report.name);
  const verdicts = [failed.length === 0 ? 'no errors' : `errors in ${failed.join(', ')}`, isFlat(memory) ? 'memory flat' : 'memory grew'];
  console.log(`${failed.length === 0 && isFlat(memory) ? 'PASS' : 'FAIL'}: ${verdicts.join(', ')}.`);
}

/** SIGTERM, which the server handles by closing; SIGKILL if it has not exited in time. */
async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timeout = sleep(STOP_TIMEOUT_MS, 'timeout', { ref: false }); // must not hold this process open
  if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
}
