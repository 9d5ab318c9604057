import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { ENV } from '../../shared/facts/environment';
import { isDeployed } from './bench-functions';
import { judgeSettling, type Settling } from './settling';

/**
 * `npm run soak [-- <seconds>] [--layout separate|embedded|both] [--idle <seconds>]`: drives the
 * local server with mixed traffic (createPet with and without Idempotency-Key, including replays;
 * listPets; getPet; unauthenticated requests) and reports where its memory goes, over time, and
 * whether it settles. What it looks for is what a short benchmark cannot show: retention (state kept
 * per request by the gateway, the function runtime or SDK clients) and errors that only appear under
 * sustained load.
 *
 * It runs the same load on two layouts, each in processes of their own, apart from the load generator:
 * - `separate`: the API (`local/server.ts`: gateway and function instances) on a dynalite in a
 *   process of its own (DYNAMODB_ENDPOINT), so each one's RSS is its own;
 * - `embedded`: the API with its embedded dynalite, as `npm start` runs.
 * Every process is started with tools/bench/soak-probe.mjs, which reports each thread's V8 heap (the
 * main thread and every function instance, however many there are). Every few seconds the soak
 * prints RSS, heap and off-heap memory per process; half-way and at the end it reads each thread's
 * live heap after a full collection; then it idles and reads RSS again, and once more after V8's
 * last-resort collection, to show what is given back and what could be.
 *
 * Verdicts: a process has settled when the trend of its RSS over the last half of the load stays
 * within SETTLING; what the live heaps gained over the second half is retention, except in dynalite,
 * which keeps every item in memory, so its growth is set against the pets stored. Exit code 0 when
 * every operation answered only its expected status and the API (separate layout) retained nothing;
 * 1 otherwise, or on any failure. Bounded: it stops by itself, and on Ctrl-C or a failure it stops
 * what it started. Loopback only. Not part of `npm test`. What the figures say: docs/performance.md.
 */
const DEFAULT_SECONDS = 45;
const DEFAULT_IDLE_SECONDS = 5;
const LAYOUTS = ['separate', 'embedded'] as const;
type Layout = (typeof LAYOUTS)[number];

const CONNECTIONS_PER_OPERATION = 2; // 4 operations × 2 = 8 connections, enough for 2 cores
const SETTLING = { fraction: 0.05, bytes: 16 * 2 ** 20 };
/** What the API's live heaps may gain over the second half without being called retention: noise, a cache filling. */
const RETENTION = { fraction: 0.1, bytes: 16 * 2 ** 20 };
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
const READ_TIMEOUT_MS = 10_000;
const REPLAY_EVERY = 20; // every 20th keyed create re-sends the previous key and body
const API_BANNER = /^\s*Animal store API\s+(http:\/\/\S+\/v1)\s*$/;
const DYNALITE_BANNER = /^dynalite (http:\/\/\S+)$/;
/** The node options of every measured process: the probe, and a full collection on request. */
const MEASURED_NODE_OPTIONS = ['--expose-gc', '--import', 'tsx', '--import', './tools/bench/soak-probe.mjs'];
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

/** What the load has stored so far: every fresh create stores a pet (and a keyed one an idempotency record). */
interface Stored {
  pets: number;
}

/** One V8 isolate of a measured process, as tools/bench/soak-probe.mjs reads it. */
interface ThreadHeap {
  readonly threadId: number;
  readonly name: string;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** The young generation's share of heapTotal: the new space's semi-spaces and its large objects. */
  readonly youngCommitted: number;
}

/** A process's memory at one moment: from /proc (the kernel's view) and from every V8 isolate in it. */
interface ProcessMemory {
  readonly rss: number;
  /** Anonymous memory: V8 heaps, malloc arenas, thread stacks; the rest of RSS is mapped files (node's code). */
  readonly rssAnon: number;
  /**
   * Pages freed with MADV_FREE (glibc's free, V8 releasing heap pages): counted in RSS until the
   * kernel needs them, then dropped without a write. RSS minus these is what the process still uses.
   */
  readonly lazyFree: number;
  readonly osThreads: number;
  readonly threads: ThreadHeap[];
}

/**
 * What every thread of a process collects before it is read (tools/bench/soak-probe.mjs): nothing;
 * a full collection, to read what is live; the last-resort one, which also returns to the system
 * the heap pages V8 keeps for reuse.
 */
type Collection = 'none' | 'full' | 'release';

/** A process the soak started and measures. */
interface Measured {
  readonly role: string;
  readonly child: ChildProcess;
  read(collection?: Collection): Promise<ProcessMemory>;
}

interface Sample {
  readonly seconds: number;
  readonly stored: Stored;
  readonly requests: number;
  readonly memory: ProcessMemory[];
}

interface LiveRead {
  readonly stored: Stored;
  readonly requests: number;
  readonly memory: ProcessMemory[];
}

interface LayoutReport {
  readonly layout: Layout;
  readonly roles: string[];
  readonly reports: OperationReport[];
  readonly samples: Sample[];
  /**
   * Each process's memory with every thread's heap after a full collection, half-way through the
   * load and at its end: what the second half added to the live heaps, once the function instances
   * are all there and warm, is what the load retains.
   */
  readonly liveAtHalf: LiveRead;
  readonly liveAtEnd: LiveRead;
  /** Every process's memory after the idle time: what is given back by itself. */
  readonly afterIdle: ProcessMemory[];
  /** Then after the last-resort collection in every thread: what V8 kept for reuse and could give back. */
  readonly released: ProcessMemory[];
  readonly idleSeconds: number;
}

const stopped = new AbortController();
process.once('SIGINT', () => stopped.abort(new Error('Interrupted.')));

const started: ChildProcess[] = [];
/** Processes the soak is stopping: their exit is expected, not a failure. */
const stopping = new Set<ChildProcess>();
try {
  const options = readOptions();
  const interval = Math.max(3, Math.round(options.seconds / 20));
  console.log(
    `Soak: ${options.seconds} s of mixed traffic per layout (${options.layouts.join(', ')}), memory every ${interval} s, ` +
      `then ${options.idle} s idle. Node ${process.version}.`,
  );
  const layouts: LayoutReport[] = [];
  for (const layout of options.layouts) {
    const report = await soak(layout, options.seconds, interval, options.idle);
    printLayout(report);
    layouts.push(report);
  }
  process.exitCode = judge(layouts) ? 0 : 1;
} catch (error) {
  process.stderr.write(`Soak failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await Promise.all(started.map(stopProcess));
}

function readOptions(): { seconds: number; layouts: Layout[]; idle: number } {
  const usage = 'Usage: npm run soak [-- <seconds>] [--layout separate|embedded|both] [--idle <seconds>]';
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { layout: { type: 'string', default: 'both' }, idle: { type: 'string', default: String(DEFAULT_IDLE_SECONDS) } },
  });
  if (positionals.length > 1) throw new Error(usage);
  const seconds = wholeSeconds(positionals[0] ?? String(DEFAULT_SECONDS), 'The duration', 10);
  const idle = wholeSeconds(values.idle, 'The idle time', 0);
  const layout = values.layout;
  if (layout !== 'both' && !LAYOUTS.includes(layout as Layout)) throw new Error(usage);
  return { seconds, idle, layouts: layout === 'both' ? [...LAYOUTS] : [layout as Layout] };
}

function wholeSeconds(text: string, what: string, minimum: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < minimum)
    throw new Error(`${what} must be a whole number of seconds, at least ${minimum}; got "${text}"`);
  return value;
}

/** One layout: start its processes, read them at rest, load them while sampling, read them live and after idling, stop them. */
async function soak(layout: Layout, seconds: number, interval: number, idle: number): Promise<LayoutReport> {
  const apiKey = `pets_${randomBytes(32).toString('base64url')}`;
  const processes: Measured[] = [];
  let baseUrl: URL;
  if (layout === 'separate') {
    const dynalite = startMeasured('dynalite', ['tools/bench/soak-dynalite.ts'], {});
    const endpoint = await waitForLine(dynalite.child, DYNALITE_BANNER);
    const api = startMeasured('API', ['local/server.ts'], { DYNAMODB_ENDPOINT: endpoint, DEV_API_KEY: apiKey });
    baseUrl = apiUrl(await waitForLine(api.child, API_BANNER));
    processes.push(api, dynalite);
  } else {
    const api = startMeasured('API + dynalite', ['local/server.ts'], { DYNAMODB_PORT: '0', DEV_API_KEY: apiKey });
    baseUrl = apiUrl(await waitForLine(api.child, API_BANNER));
    processes.push(api);
  }
  const readAll = (collection?: Collection) => Promise.all(processes.map((measured) => measured.read(collection)));

  try {
    const stored: Stored = { pets: 0 };
    const petId = await createPet(baseUrl, apiKey);
    stored.pets += 1;
    const operations = defineOperations(baseUrl, apiKey, petId, stored);
    const samples: Sample[] = [];
    const loadStarted = Date.now();
    let requests = 0;
    const readLive = async (): Promise<LiveRead> => {
      const at = { stored: { ...stored }, requests };
      return { ...at, memory: await readAll('full') };
    };
    // One full collection half-way through disturbs the series at one point, and measures what is live.
    const liveAtHalf = sleep(seconds * 500, undefined, { signal: stopped.signal }).then(readLive);
    liveAtHalf.catch(() => undefined); // awaited below; a failure meanwhile stops the run through `stopped`
    const sampler = setInterval(() => {
      // A read lost to a dying process is reported by the failure that stops the run.
      readAll().then(
        (memory) => samples.push({ seconds: Math.round((Date.now() - loadStarted) / 1_000), stored: { ...stored }, requests, memory }),
        () => undefined,
      );
    }, interval * 1_000);
    let reports: OperationReport[];
    try {
      reports = await runMix(baseUrl, operations, seconds, () => requests++);
    } finally {
      clearInterval(sampler);
    }
    const end = await readAll();
    samples.push({ seconds: Math.round((Date.now() - loadStarted) / 1_000), stored: { ...stored }, requests, memory: end });
    const liveAtEnd = await readLive();
    await sleep(idle * 1_000, undefined, { signal: stopped.signal });
    const afterIdle = await readAll();
    const released = await readAll('release');
    return {
      layout,
      roles: processes.map(({ role }) => role),
      reports,
      samples,
      liveAtHalf: await liveAtHalf,
      liveAtEnd,
      afterIdle,
      released,
      idleSeconds: idle,
    };
  } finally {
    await Promise.all(processes.map(({ child }) => stopProcess(child)));
  }
}

/**
 * Starts a TypeScript entry point in node with tsx's loader and the probe inside node itself: the
 * tsx binary would spawn another process, and the pid whose memory is read must be the measured one.
 * The child's output is read line by line (a pipe nobody reads would block it once full) and dropped.
 */
function startMeasured(role: string, entry: string[], variables: Record<string, string>): Measured {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    [ENV.logLevel]: 'WARN',
    ...variables,
  };
  delete env.DATA_DIR; // in memory: the soak measures what the load stores, not what a developer kept
  const child = spawn(process.execPath, [...MEASURED_NODE_OPTIONS, ...entry], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  started.push(child);
  // A process that dies mid-run stops the load at once instead of hammering a closed port.
  child.once('exit', (code, signal) => {
    if (!stopping.has(child)) stopped.abort(new Error(`${role} exited (${signal ?? `code ${code}`}).`));
  });
  let reads = 0;
  const pending = new Map<number, (threads: ThreadHeap[]) => void>();
  child.on('message', (message: { type?: string; id: number; threads: ThreadHeap[] }) => {
    if (message.type === 'soak-read') pending.get(message.id)?.(message.threads);
  });
  return {
    role,
    child,
    async read(collection = 'none') {
      const id = ++reads;
      const threads = new Promise<ThreadHeap[]>((resolve, reject) => {
        pending.set(id, resolve);
        setTimeout(() => reject(new Error(`${role} did not report its heaps within ${READ_TIMEOUT_MS} ms.`)), READ_TIMEOUT_MS).unref();
      }).finally(() => pending.delete(id));
      child.send({ type: 'soak-read', id, collection });
      // /proc after the threads have answered, so that it shows what their collections released.
      const heaps = await threads;
      return { ...(await readStatus(child.pid!)), threads: heaps };
    },
  };
}

/** On 127.0.0.1 rather than `localhost`, which may resolve to ::1 where the server does not listen. */
function apiUrl(text: string): URL {
  const url = new URL(text);
  url.hostname = '127.0.0.1';
  return url;
}

/** Resolves with the first group of the first line of the child's output that matches. */
function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  const signal = AbortSignal.any([stopped.signal, AbortSignal.timeout(STARTUP_TIMEOUT_MS)]);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = pattern.exec(line);
      if (match) resolve(match[1]!);
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

function defineOperations(baseUrl: URL, apiKey: string, petId: number, stored: Stored): Operation[] {
  const pets = `${baseUrl.pathname}/pets`;
  const authorized = { authorization: `Bearer ${apiKey}` };
  return [
    {
      name: 'createPet',
      expected: 201,
      headers: { ...authorized, 'content-type': 'application/json' },
      requests: createPetRequests(pets, stored),
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
 * Every fresh create is counted in `stored` as it is sent.
 */
function createPetRequests(path: string, stored: Stored): autocannon.Request[] {
  type Context = { lastKeyed?: { key: string; body: string } };
  // Shared by all connections and both phases: every fresh create sends a body no other one does.
  let created = 0;
  const nextPetBody = () => {
    created += 1;
    stored.pets += 1;
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

/** Runs every operation at once, one autocannon instance each, so latency is per operation. */
async function runMix(baseUrl: URL, operations: Operation[], durationSeconds: number, onResponse: () => void): Promise<OperationReport[]> {
  stopped.signal.throwIfAborted();
  const instances: autocannon.Instance[] = [];
  const stopAll = () => {
    for (const instance of instances) instance.stop();
  };
  stopped.signal.addEventListener('abort', stopAll, { once: true });
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
            const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
            instance.on('response', onResponse);
            instances.push(instance);
          }),
      ),
    );
    stopped.signal.throwIfAborted();
    return operations.map((operation, index) => report(operation, results[index]!));
  } finally {
    stopped.signal.removeEventListener('abort', stopAll);
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

/** RSS, its anonymous and lazily freed parts and the number of OS threads, from /proc. */
async function readStatus(pid: number): Promise<Omit<ProcessMemory, 'threads'>> {
  const [status, rollup] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/smaps_rollup`, 'utf8')]);
  const field = (text: string, name: string) => {
    const value = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1];
    if (value === undefined) throw new Error(`No ${name} in /proc/${pid}.`);
    return Number(value);
  };
  return {
    rss: field(status, 'VmRSS') * 1024,
    rssAnon: field(status, 'RssAnon') * 1024,
    lazyFree: field(rollup, 'LazyFree') * 1024,
    osThreads: field(status, 'Threads'),
  };
}

function sum(threads: ThreadHeap[], key: keyof Omit<ThreadHeap, 'name'>): number {
  return threads.reduce((total, thread) => total + thread[key], 0);
}

function mib(bytes: number): string {
  return (bytes / MiB).toFixed(1);
}

/** The function instances: every isolate but the main thread's. */
function workersOf(memory: ProcessMemory): ThreadHeap[] {
  return memory.threads.filter((thread) => thread.name !== 'main');
}

/** Each process's RSS over the load, in MiB against seconds, judged on its last half. */
function settlingOf(report: LayoutReport, index: number): Settling {
  return judgeSettling(
    report.samples.map(({ seconds, memory }) => ({ x: seconds, y: memory[index]!.rss })),
    SETTLING,
  );
}

function printLayout(report: LayoutReport): void {
  const title =
    report.layout === 'separate'
      ? 'Separate: the API (gateway and function instances) and dynalite in a process each'
      : 'Embedded: the API with its dynalite in one process, as `npm start` runs';
  console.log(`\n${title}`);
  console.table(
    Object.fromEntries(
      report.reports.map(({ name, result, errors }) => [
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
  for (const { name, detail } of report.reports) if (detail) console.log(`  ${name} errors: ${detail}`);

  console.log('Memory over the load, MiB (heap: V8 heap used by every thread, main + function instances; off-heap: external):');
  console.table(
    report.samples.map(({ seconds, stored, memory }) => ({
      s: seconds,
      pets: stored.pets,
      ...Object.fromEntries(
        memory.flatMap((process, index) => {
          const role = report.roles[index]!;
          const main = process.threads.find((thread) => thread.name === 'main');
          const workers = workersOf(process);
          return [
            [`${role} RSS`, mib(process.rss)],
            [`${role} heap`, `${mib(main?.heapUsed ?? 0)}${workers.length > 0 ? ` + ${mib(sum(workers, 'heapUsed'))}` : ''}`],
            [`${role} off-heap`, mib(sum(process.threads, 'external'))],
            ...(workers.length > 0 || role.startsWith('API') ? [[`${role} instances`, workers.length]] : []),
          ];
        }),
      ),
    })),
  );

  for (const [index, role] of report.roles.entries()) {
    const loaded = report.samples.at(-1)!.memory[index]!;
    const half = report.liveAtHalf.memory[index]!;
    const live = report.liveAtEnd.memory[index]!;
    const idle = report.afterIdle[index]!;
    const released = report.released[index]!;
    console.log(
      `\n${role} at the end of the load: RSS ${mib(loaded.rss)} MiB (${mib(loaded.rssAnon)} anonymous); V8 heaps committed ` +
        `${mib(sum(loaded.threads, 'heapTotal'))} (young generation ${mib(sum(loaded.threads, 'youngCommitted'))}), used ` +
        `${mib(sum(loaded.threads, 'heapUsed'))}; external ${mib(sum(loaded.threads, 'external'))}; ${loaded.threads.length} isolates, ` +
        `${loaded.osThreads} OS threads.\n  After a full collection: live ${mib(sum(live.threads, 'heapUsed'))} MiB, heaps committed ` +
        `${mib(sum(live.threads, 'heapTotal'))}, RSS ${mib(live.rss)}.\n  After ${report.idleSeconds} s idle: RSS ${mib(idle.rss)} MiB ` +
        `(${mib(idle.lazyFree)} of it freed lazily). After the last-resort collection, which returns the pages V8 keeps for reuse: ` +
        `RSS ${mib(released.rss)} MiB, heaps committed ${mib(sum(released.threads, 'heapTotal'))}, live ${mib(sum(released.threads, 'heapUsed'))}, ` +
        `array buffers ${mib(sum(released.threads, 'arrayBuffers'))}.`,
    );
    const atHalf = new Map(half.threads.map((thread) => [thread.threadId, thread]));
    const underLoad = new Map(loaded.threads.map((thread) => [thread.threadId, thread]));
    console.table(
      Object.fromEntries(
        live.threads.map((thread) => {
          const loadedThread = underLoad.get(thread.threadId);
          return [
            thread.name,
            {
              'live at half': atHalf.has(thread.threadId) ? mib(atHalf.get(thread.threadId)!.heapUsed) : '',
              'live at end': mib(thread.heapUsed),
              'committed under load': loadedThread === undefined ? '' : mib(loadedThread.heapTotal),
              'of which young': loadedThread === undefined ? '' : mib(loadedThread.youngCommitted),
              external: mib(thread.external),
              arrayBuffers: mib(thread.arrayBuffers),
            },
          ];
        }),
      ),
    );
  }
  for (const [index, role] of report.roles.entries()) {
    const settling = settlingOf(report, index);
    const retained = retainedOverSecondHalf(report, index);
    console.log(
      `${role}: RSS trend over the last half ${signed(mib(settling.slope * 60))} MiB/min ` +
        `(${signed(mib(settling.growth))} MiB over it; allowed ${mib(settling.allowed)}): ${settling.settled ? 'settled' : 'still growing'}. ` +
        `Live heap over the second half ${signed(mib(retained.bytes))} MiB: ${Math.round(retained.perRequest)} bytes per request, ` +
        `${Math.round(retained.perPet)} bytes per pet stored.`,
    );
  }
}

function signed(text: string): string {
  return text.startsWith('-') ? text : `+${text}`;
}

/**
 * What the live heaps of a process gained between the two full collections, over the requests
 * served and the pets stored meanwhile: data for a store, retention for anything else. Only threads
 * read both times count: an instance started since has nothing to compare with.
 */
function retainedOverSecondHalf(report: LayoutReport, index: number): { bytes: number; perRequest: number; perPet: number } {
  const atHalf = new Map(report.liveAtHalf.memory[index]!.threads.map((thread) => [thread.threadId, thread.heapUsed]));
  const bytes = report.liveAtEnd.memory[index]!.threads.reduce((total, thread) => {
    const before = atHalf.get(thread.threadId);
    return before === undefined ? total : total + thread.heapUsed - before;
  }, 0);
  const requests = report.liveAtEnd.requests - report.liveAtHalf.requests;
  const pets = report.liveAtEnd.stored.pets - report.liveAtHalf.stored.pets;
  return { bytes, perRequest: bytes / Math.max(1, requests), perPet: bytes / Math.max(1, pets) };
}

/**
 * Passes when nothing answered an unexpected status and the API alone (the separate layout) retained
 * nothing: its live heaps grew by no more than RETENTION over the second half. Its RSS settling is
 * reported, not judged: V8 sizes its heaps to the load and keeps freed pages (see docs/performance.md),
 * which on a busy machine takes longer than a soak.
 */
function judge(layouts: LayoutReport[]): boolean {
  const failures = layouts.flatMap((layout) =>
    layout.reports.filter(({ errors }) => errors > 0).map(({ name }) => `errors in ${name} (${layout.layout})`),
  );
  const verdicts: string[] = [];
  const separate = layouts.find(({ layout }) => layout === 'separate');
  if (separate !== undefined) {
    const retained = retainedOverSecondHalf(separate, 0).bytes;
    const allowed = Math.max(RETENTION.fraction * sum(separate.liveAtEnd.memory[0]!.threads, 'heapUsed'), RETENTION.bytes);
    if (retained > allowed)
      failures.push(`the API retained ${mib(retained)} MiB of live heap over the second half (allowed ${mib(allowed)})`);
    else verdicts.push(`the API retained nothing (${signed(mib(retained))} MiB of live heap over the second half)`);
    verdicts.push(`its RSS ${settlingOf(separate, 0).settled ? 'settled' : 'did not settle'}`);
  }
  console.log(
    `\n${failures.length === 0 ? 'PASS' : 'FAIL'}: ${[...failures, ...(failures.length === 0 ? ['no errors'] : []), ...verdicts].join(', ')}.`,
  );
  return failures.length === 0;
}

/** SIGTERM, which the server and dynalite handle by closing; SIGKILL if it has not exited in time. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  stopping.add(child);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timeout = sleep(STOP_TIMEOUT_MS, 'timeout', { ref: false }); // must not hold this process open
  if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
}
