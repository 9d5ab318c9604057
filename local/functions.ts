import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { watch, type FSWatcher } from 'chokidar';
import { isOperationFile, OPERATIONS_DIR, writeOperationFiles } from './operation-files';
import { build, type BuildFailure } from 'esbuild';
import { FUNCTION_CATALOG } from '../shared/catalog/function-catalog';
import { fileNameOf, FUNCTION_NAMES, type FunctionName } from '../shared/facts/function-names';
import { FUNCTION_TIMEOUT_MS } from '../shared/facts/time-budget';
import { FUNCTIONS_DIR, PROJECT_ROOT, SHARED_DIR } from '../shared/facts/project-layout';
import { type OutputDestination, type OutputStream, writeLine } from '../shared/runtime/output';
import { messageOf } from '../shared/runtime/error-message';
import { unhandled } from '../shared/runtime/unhandled';
import { systemLogLevelFrom, type SystemLogLevel } from './console-log';

/** Bundles live inside the project so their package imports resolve from its node_modules. */
const BUILD_DIR = join(PROJECT_ROOT, '.build', 'local');
const INSTANCE_SCRIPT = new URL('./function-instance.mjs', import.meta.url);

export interface FunctionRuntime {
  /**
   * Invokes the function of this name (functions/<fileNameOf(name)>.ts) with an event, as Lambda would, and
   * returns its result. Rejects with FunctionTimeoutError when the handler outlives the function timeout.
   */
  invoke(name: string, event: unknown): Promise<unknown>;
  /**
   * A module of the source root as the sources are now: `loaded` until a watched change, then a fresh
   * bundle of it, so that the gateway and the functions never disagree.
   */
  sourceModule<T>(path: string, loaded: T): Promise<T>;
  close(): Promise<void>;
}

/** Lambda's "Task timed out": the invocation failed, and its instance is not used again. */
export class FunctionTimeoutError extends Error {
  constructor(name: string, timeoutMs: number) {
    super(`${name}: Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`);
    this.name = 'FunctionTimeoutError';
  }
}

/**
 * Lambda's "Runtime exited" when a function runs out of memory: the invocation failed, and its instance
 * is gone; the next invocation is a cold start.
 */
export class FunctionOutOfMemoryError extends Error {
  constructor(name: string, memoryMiB: number) {
    super(`${name}: Runtime exited with error: JavaScript heap out of memory (memory size ${memoryMiB} MB)`);
    this.name = 'FunctionOutOfMemoryError';
  }
}

/** What a function threw, as its instance reported it. */
export class FunctionError extends Error {
  constructor(described: { name: string; message: string; stack?: string }) {
    super(described.message);
    this.name = described.name;
    if (described.stack) this.stack = described.stack;
  }
}

/** What a function threw while its module loaded (its configuration read at cold start included): Lambda's init error. */
export class FunctionInitError extends FunctionError {}

/** Lambda's "Runtime exited": the instance ended in the middle of an invocation (process.exit, an error thrown outside the handler). */
export class FunctionExitedError extends Error {
  constructor(name: string, reason: string) {
    super(`${name}: Runtime exited with error: ${reason}`);
    this.name = 'FunctionExitedError';
  }
}

/** esbuild refused a module of the sources (functions/, shared/): its messages, each `file:line:column: ERROR: text` as esbuild prints them. */
export class SourceBuildError extends Error {
  constructor(
    readonly entry: string,
    readonly errors: readonly string[],
  ) {
    super(`${entry} did not build: ${errors.join('; ')}`);
    this.name = 'SourceBuildError';
  }
}

/**
 * A failure the runtime saw, for the developer's console: API Gateway answers it with a bare 500, and
 * without this line nothing would say what failed, or where.
 */
export interface FunctionFailure {
  /** The function's name (`listPets`); absent when the module is the gateway's own (the route table). */
  readonly function?: string;
  /** When it failed: building its bundle, checking its configuration after an edit, loading its module, running the handler, or beyond the function's limits. */
  readonly phase: 'build' | 'config' | 'init' | 'invoke' | 'timeout' | 'out-of-memory' | 'exit';
  /** What happened and where, in one line: esbuild's `file:line:column`, or the error and the source position it was thrown at. */
  readonly message: string;
}

/** One function instance: a worker thread running local/function-instance.mjs, one invocation at a time. */
interface Instance {
  readonly worker: Worker;
  /** The build generation it runs: a change under functions/ or shared/ (with `watch`) starts a new one. */
  readonly generation: number;
  /** The invocation it is running, if any. */
  running?: { readonly id: number; resolve(result: unknown): void; reject(error: Error): void };
  /** Set once its worker has failed or exited: it takes no invocation again. */
  ended: boolean;
  /** How long its worker took to load the function, reported with its first invocation (Lambda's Init Duration). */
  initDurationMs?: number;
  /** The most memory it has been seen using, in bytes (Lambda's Max Memory Used). */
  maxMemoryUsedBytes: number;
  /** Ends it once it has been idle for the idle lifetime. */
  idleTimer?: NodeJS.Timeout;
}

/** A function's instances: idle ones to reuse, and invocations waiting for one when all are busy. */
interface Pool {
  readonly idle: Instance[];
  /** Instances counted against the limit: starting, busy or idle, until their worker has exited. */
  live: number;
  /** Invocations waiting for an instance; each gets an idle instance, or undefined with a slot to start one in. */
  readonly waiting: Array<(handed: Instance | undefined) => void>;
}

/**
 * Instances one function may have at once: each is a worker thread on the developer's cores, so beyond
 * this a burst waits for a warm instance rather than paying a cold start each.
 */
export const DEFAULT_MAX_INSTANCES = 4;

/** How long an idle instance is kept, so a developer's pauses stay warm and a burst's instances give their memory back. */
export const DEFAULT_IDLE_LIFETIME_MS = 5 * 60_000;

/** Lambda's default memory size, for a handler no stage deploys (a test's). */
const LAMBDA_DEFAULT_MEMORY_MIB = 128;

/**
 * A function's memory size: the smallest any stage deploys it with, so that what fits locally fits in
 * every stage.
 */
export function memorySizeOf(name: string): number {
  if (!(FUNCTION_NAMES as readonly string[]).includes(name)) return LAMBDA_DEFAULT_MEMORY_MIB;
  return Math.min(...Object.values(FUNCTION_CATALOG[name as FunctionName].memoryMiB));
}

/**
 * V8's heap limits in an instance of `memoryMiB`, as Lambda's Node.js runtime sets them from the
 * function's memory (--max-semi-space-size and --max-old-space-size).
 */
export function heapLimitsOf(memoryMiB: number): { maxYoungGenerationSizeMb: number; maxOldGenerationSizeMb: number } {
  return { maxYoungGenerationSizeMb: Math.floor(memoryMiB * 0.05), maxOldGenerationSizeMb: Math.floor(memoryMiB * 0.9) };
}

/**
 * Runs the handlers in functions/ the way Lambda does: each bundled on its own, in worker-thread instances
 * that run one invocation at a time with their own environment and a heap bounded by the function's memory.
 * With `watch`, a source change retires every instance, so the next request gets a fresh build.
 */
export async function createFunctionRuntime(options: {
  watch?: boolean;
  onReload?: (file: string) => void;
  /** The functions' environment, as the stack would set it (prepareLocalStage in local/dynamodb-local.ts). */
  environment?: Readonly<Record<string, string>>;
  /** Variables laid over one function's environment, by its name: a fault a test injects. */
  environmentOf?: (name: string) => Readonly<Record<string, string>> | undefined;
  /** Told of every invocation that fails and why (its build, its module's load, its handler, its limits). */
  onFunctionError?: (failure: FunctionFailure) => void;
  /** Folder holding functions/ and shared/; the project itself unless a test says otherwise. */
  sourceRoot?: string;
  /** Every function's timeout; the deployed one (shared/facts/time-budget.ts) unless a test says otherwise. */
  timeoutMs?: number;
  /** Instances one function may have at once; DEFAULT_MAX_INSTANCES unless a test says otherwise. */
  maxInstances?: number;
  /** How long an idle instance waits for an invocation before it ends; DEFAULT_IDLE_LIFETIME_MS unless a test says otherwise. */
  idleLifetimeMs?: number;
  /**
   * Where the functions' output lines go, and each invocation's platform lines (platformLines): this
   * process's one writer unless the server renders them for a terminal (local/console-log.ts).
   */
  output?: OutputDestination;
  /**
   * Which platform lines are written, as Lambda's system log level says: START and REPORT at INFO
   * and below. SYSTEM_LOG_LEVEL's (INFO unless set) unless the caller says; the tests set WARN.
   */
  systemLogLevel?: SystemLogLevel;
}): Promise<FunctionRuntime> {
  const output = options.output ?? writeLine;
  const systemLogLevel = options.systemLogLevel ?? systemLogLevelFrom('SYSTEM_LOG_LEVEL', process.env.SYSTEM_LOG_LEVEL);
  const platformOutput: OutputDestination = systemLogLevel === 'WARN' ? () => {} : output;
  const sourceRoot = options.sourceRoot ?? PROJECT_ROOT;
  const timeoutMs = options.timeoutMs ?? FUNCTION_TIMEOUT_MS;
  const maxInstances = options.maxInstances ?? DEFAULT_MAX_INSTANCES;
  const idleLifetimeMs = options.idleLifetimeMs ?? DEFAULT_IDLE_LIFETIME_MS;
  const session = randomUUID().slice(0, 8);
  const buildDir = join(BUILD_DIR, session);
  await mkdir(buildDir, { recursive: true });
  let generation = 0;
  let invocations = 0;
  let closed = false;
  // One bundle per function and generation, shared by its instances: a burst of cold starts builds
  // once. Each worker imports it into a module graph of its own, so every instance is a fresh module.
  let bundles = new Map<string, Promise<string>>();
  const pools = new Map<string, Pool>();
  const workers = new Set<Worker>();

  /** A function's bundle, or (`entry` given) that module's, relative to the source root. */
  function bundleOf(name: string, entry = join(FUNCTIONS_DIR, `${fileNameOf(name)}.ts`)): Promise<string> {
    let bundle = bundles.get(name);
    if (!bundle) {
      const outfile = join(buildDir, `${name}.${generation}.mjs`);
      bundle = build({
        entryPoints: [join(sourceRoot, entry)],
        // esbuild names the files in its messages relative to this: functions/list-pets.ts.
        absWorkingDir: sourceRoot,
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node24',
        packages: 'external',
        sourcemap: 'inline',
        // Its messages reach the developer through onFunctionError, with the function they belong to.
        logLevel: 'silent',
      }).then(
        () => outfile,
        (failure: BuildFailure) => {
          throw new SourceBuildError(entry, failure.errors?.map(esbuildLine) ?? [String(failure)]);
        },
      );
      const built = bundles;
      // A failed build is retried on the next cold start rather than remembered.
      bundle.catch(() => built.get(name) === bundle && built.delete(name));
      bundles.set(name, bundle);
    }
    return bundle;
  }

  /** Starts an instance in a slot already counted in `pool.live`; the slot is given back when its worker exits. */
  async function start(name: string, pool: Pool): Promise<Instance> {
    const startedIn = generation;
    let bundle: string;
    try {
      bundle = await bundleOf(name);
      if (closed) throw new Error('The function runtime is closed.');
    } catch (error) {
      giveBackSlot(pool);
      throw error;
    }
    const memoryMiB = memorySizeOf(name);
    const loadStarted = performance.now();
    const worker = new Worker(INSTANCE_SCRIPT, {
      env: instanceEnvironment({ ...options.environment, ...options.environmentOf?.(name) }),
      workerData: { bundleUrl: pathToFileURL(bundle).href, functionName: `animal-store-local-${name}`, timeoutMs, memoryMiB },
      resourceLimits: heapLimitsOf(memoryMiB),
      // None of the server's own flags: an instance runs a plain-JavaScript bundle, as Lambda's runtime does, and
      // the TypeScript loader npm start runs under (tsx) would cost every cold start a loader it never uses.
      execArgv: [],
      stdout: true,
      stderr: true,
    });
    workers.add(worker);
    forwardLines(worker.stdout, 'stdout', output);
    forwardLines(worker.stderr, 'stderr', output);
    const instance: Instance = { worker, generation: startedIn, ended: false, maxMemoryUsedBytes: 0 };
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: InstanceMessage) => {
        switch (message.type) {
          case 'ready':
            instance.initDurationMs = performance.now() - loadStarted;
            return resolve();
          case 'failed':
            return reject(new FunctionInitError(message.error));
          case 'result':
            noteMemoryUsed(instance, message.memoryUsedBytes);
            return message.id === instance.running?.id && instance.running.resolve(message.result);
          case 'error':
            noteMemoryUsed(instance, message.memoryUsedBytes);
            return message.id === instance.running?.id && instance.running.reject(new FunctionError(message.error));
          default:
            return unhandled(message);
        }
      });
      worker.on('error', (error: Error & { code?: string }) => {
        instance.ended = true;
        const failure =
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new FunctionOutOfMemoryError(name, memoryMiB)
            : new FunctionExitedError(name, `${error.name}: ${error.message}${sourcePosition(error, sourceRoot)}`);
        reject(failure);
        instance.running?.reject(failure);
      });
      worker.once('exit', (code) => {
        instance.ended = true;
        clearTimeout(instance.idleTimer);
        const exited = new FunctionExitedError(name, `exit status ${code}`);
        reject(exited);
        instance.running?.reject(exited);
        workers.delete(worker);
        const idle = pool.idle.indexOf(instance);
        if (idle !== -1) pool.idle.splice(idle, 1);
        giveBackSlot(pool);
      });
    });
    await ready.catch(async (error) => {
      await worker.terminate();
      throw error;
    });
    return instance;
  }

  /** An idle instance, or a slot to start one in, or a wait for either. */
  async function acquire(name: string): Promise<Instance> {
    let pool = pools.get(name);
    if (!pool) {
      pool = { idle: [], live: 0, waiting: [] };
      pools.set(name, pool);
    }
    // The most recently used first, as warm as can be; the others stay idle.
    const idle = pool.idle.pop();
    if (idle) {
      clearTimeout(idle.idleTimer);
      return idle;
    }
    if (pool.live < maxInstances) {
      pool.live++;
      return start(name, pool);
    }
    const waiting = pool.waiting;
    const handed = await new Promise<Instance | undefined>((resolve) => waiting.push(resolve));
    if (closed) throw new Error('The function runtime is closed.');
    return handed ?? start(name, pool);
  }

  /**
   * After an invocation: the instance waits for the next, for the idle lifetime at most, unless it is
   * stale, ended or the runtime closed.
   */
  function release(pool: Pool, instance: Instance): void {
    if (closed || instance.ended || instance.generation !== generation) {
      void instance.worker.terminate();
      return;
    }
    const next = pool.waiting.shift();
    if (next) {
      next(instance);
      return;
    }
    pool.idle.push(instance);
    instance.idleTimer = setTimeout(() => {
      // Out of the idle list first, so that no invocation takes it while its worker ends.
      const idle = pool.idle.indexOf(instance);
      if (idle !== -1) pool.idle.splice(idle, 1);
      void instance.worker.terminate();
    }, idleLifetimeMs);
    // The timer alone never keeps the process alive.
    instance.idleTimer.unref();
  }

  /** An instance's slot is free: it passes straight to a waiting invocation, so the limit holds. */
  function giveBackSlot(pool: Pool): void {
    const next = pool.waiting.shift();
    if (next) next(undefined);
    else pool.live--;
  }

  // chokidar rather than fs.watch, which silently stops reporting a file that an editor's atomic save
  // (a temporary file renamed over it) replaces.
  let watcher: FSWatcher | undefined;
  // What the functions bundle of an operation's file is written from it (npm run generate): written again on each
  // save, one writing at a time and once more after a save during one, so an earlier, slower writing never lands last.
  let writing: Promise<void> | undefined;
  let savedSince = false;
  // The file saved last before a writing began is the one its failure names, not the save that started the loop.
  let lastSaved = '';
  const writeGenerated = (file: string): void => {
    savedSince = true;
    lastSaved = file;
    writing ??= (async () => {
      while (savedSince) {
        savedSince = false;
        const saved = lastSaved;
        await writeOperationFiles(sourceRoot).catch((error: unknown) =>
          options.onFunctionError?.({ phase: 'build', message: `${saved} did not load: ${messageOf(error)}` }),
        );
      }
    })().finally(() => {
      writing = undefined;
    });
  };
  let operationsWatcher: FSWatcher | undefined;
  if (options.watch) {
    watcher = watch([join(sourceRoot, FUNCTIONS_DIR), join(sourceRoot, SHARED_DIR)], { ignoreInitial: true });
    // An operation's file is read once its save has finished: a save seen half-written (an empty file) may bring no
    // further event, and the generated files would stay as the save before left them. Their own change reloads.
    operationsWatcher = watch(join(sourceRoot, OPERATIONS_DIR), {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 20 },
    });
    operationsWatcher.on('all', (_event, path) => {
      if (isOperationFile(relative(sourceRoot, path))) writeGenerated(relative(sourceRoot, path));
    });
    watcher.on('all', (_event, path) => {
      generation++;
      bundles = new Map();
      // Busy instances are stale now and end once their invocation has (release).
      for (const pool of pools.values()) for (const instance of pool.idle.splice(0)) void instance.worker.terminate();
      options.onReload?.(relative(sourceRoot, path));
    });
    await Promise.all([watcher, operationsWatcher].map((each) => new Promise<void>((ready) => each.once('ready', ready))));
  }

  async function invokeOnce(name: string, event: unknown): Promise<unknown> {
    const instance = await acquire(name);
    const id = ++invocations;
    const requestId = randomUUID();
    const started = performance.now();
    const initDurationMs = instance.initDurationMs;
    // Lambda reports the init duration once, with the cold start's invocation.
    instance.initDurationMs = undefined;
    const platform = platformLines(platformOutput, { function: name, requestId });
    platform.start();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let failed = false;
    try {
      return await new Promise<unknown>((resolve, reject) => {
        instance.running = { id, resolve, reject };
        timer = setTimeout(() => {
          // Lambda discards a timed-out instance, whatever it was doing; the next invocation is a cold start.
          timedOut = true;
          reject(new FunctionTimeoutError(name, timeoutMs));
          void instance.worker.terminate();
        }, timeoutMs);
        instance.worker.postMessage({ id, event, requestId });
      });
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const durationMs = performance.now() - started;
      const status = timedOut ? 'timeout' : failed ? 'failure' : 'success';
      platform.end(status, {
        durationMs,
        initDurationMs,
        memorySizeMB: memorySizeOf(name),
        maxMemoryUsedBytes: instance.maxMemoryUsedBytes,
      });
      clearTimeout(timer);
      instance.running = undefined;
      if (!timedOut && workers.has(instance.worker)) release(pools.get(name)!, instance);
    }
  }

  return {
    async invoke(name, event) {
      try {
        return await invokeOnce(name, event);
      } catch (error) {
        // Build, load and configuration failures as well as the invocation's own: each said once, with its function.
        const failure = closed ? undefined : describeFailure(name, error, sourceRoot);
        if (failure) options.onFunctionError?.(failure);
        throw error;
      }
    },
    async sourceModule(path, loaded) {
      if (generation === 0) return loaded;
      try {
        // Bundled as a handler is, once per generation: each bundle is a module of its own, from the sources as they are now.
        const bundle = await bundleOf(`source-${path.replace(/\W+/g, '-')}`, path);
        return (await import(pathToFileURL(bundle).href)) as typeof loaded;
      } catch (error) {
        options.onFunctionError?.({ phase: 'build', message: messageOf(error) });
        throw error;
      }
    },
    async close() {
      closed = true;
      await Promise.all([watcher?.close(), operationsWatcher?.close()]);
      // A writing of the generated files in progress ends whole.
      await writing;
      for (const pool of pools.values()) for (const next of pool.waiting.splice(0)) next(undefined);
      await Promise.all([...workers].map((worker) => worker.terminate()));
      await rm(buildDir, { recursive: true, force: true });
    },
  };
}

/** esbuild's one-line form of a message: `functions/list-pets.ts:43:22: ERROR: Unexpected ";"`. */
function esbuildLine({ text, location }: BuildFailure['errors'][number]): string {
  return location ? `${location.file}:${location.line}:${location.column}: ERROR: ${text}` : `ERROR: ${text}`;
}

/** A failed invocation, told as what happened and where; undefined for the runtime's own refusals (closed). */
function describeFailure(name: string, error: unknown, sourceRoot: string): FunctionFailure | undefined {
  if (error instanceof SourceBuildError)
    return { function: name, phase: 'build', message: `${name} did not build: ${error.errors.join('; ')}` };
  if (error instanceof FunctionTimeoutError) return { function: name, phase: 'timeout', message: error.message };
  if (error instanceof FunctionOutOfMemoryError) return { function: name, phase: 'out-of-memory', message: error.message };
  if (error instanceof FunctionExitedError) return { function: name, phase: 'exit', message: error.message };
  if (error instanceof FunctionError) {
    const phase = error instanceof FunctionInitError ? 'init' : 'invoke';
    const during = phase === 'init' ? 'failed while loading' : 'threw';
    return { function: name, phase, message: `${name} ${during}: ${error.name}: ${error.message}${sourcePosition(error, sourceRoot)}` };
  }
  return undefined;
}

/**
 * ` (shared/runtime/config.ts:57:11)`: the first frame of the stack in the sources, relative to their root,
 * where the error was thrown; empty when none is (the instance maps its stack to the TypeScript sources).
 */
function sourcePosition(error: Error, sourceRoot: string): string {
  const roots = [FUNCTIONS_DIR, SHARED_DIR].map((folder) => `${join(sourceRoot, folder)}/`);
  for (const line of error.stack?.split('\n').slice(1) ?? []) {
    const frame = /\(?((?:file:\/\/)?\/[^()\s]+):(\d+):(\d+)\)?$/.exec(line.trim());
    if (!frame) continue;
    const file = frame[1]!.startsWith('file:') ? fileURLToPath(frame[1]!) : frame[1]!;
    if (roots.some((root) => file.startsWith(root))) return ` (${relative(sourceRoot, file)}:${frame[2]}:${frame[3]})`;
  }
  return '';
}

/**
 * What an instance writes to its stdout or stderr, line by line through this process's one writer, so
 * that its lines never interleave with others. The instance waits for them to be read before it answers.
 */
function forwardLines(input: Readable, stream: OutputStream, output: OutputDestination): void {
  createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => output(stream, line));
}

function noteMemoryUsed(instance: Instance, bytes: number | undefined): void {
  if (bytes !== undefined && bytes > instance.maxMemoryUsedBytes) instance.maxMemoryUsedBytes = bytes;
}

/** What an invocation's REPORT says: its duration, the cold start's init duration, the memory size and the most used. */
interface InvocationReport {
  readonly durationMs: number;
  readonly initDurationMs: number | undefined;
  readonly memorySizeMB: number;
  readonly maxMemoryUsedBytes: number;
}

/**
 * Lambda's platform lines for one invocation, in the deployed functions' JSON log format, each naming its
 * function since here every function shares one console.
 */
function platformLines(output: OutputDestination, invocation: { readonly function: string; readonly requestId: string }) {
  const write = (type: string, record: Record<string, unknown>) =>
    output('stdout', JSON.stringify({ time: new Date().toISOString(), type, function: invocation.function, record }));
  return {
    start: () => write('platform.start', { requestId: invocation.requestId, version: '$LATEST' }),
    end(status: 'success' | 'failure' | 'timeout', report: InvocationReport) {
      const durationMs = Math.round(report.durationMs * 100) / 100;
      write('platform.report', {
        requestId: invocation.requestId,
        status,
        metrics: {
          durationMs,
          billedDurationMs: Math.ceil(report.durationMs),
          memorySizeMB: report.memorySizeMB,
          maxMemoryUsedMB: Math.ceil(report.maxMemoryUsedBytes / (1024 * 1024)),
          ...(report.initDurationMs === undefined ? {} : { initDurationMs: Math.round(report.initDurationMs * 100) / 100 }),
        },
      });
    },
  };
}

type InstanceMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: { name: string; message: string; stack?: string } }
  | { type: 'result'; id: number; result: unknown; memoryUsedBytes?: number }
  | { type: 'error'; id: number; error: { name: string; message: string; stack?: string }; memoryUsedBytes?: number };

/**
 * An instance's environment: this process's, with the function's laid over it. Local credentials
 * replace any the developer's shell has, profile and session token included.
 */
export function instanceEnvironment(
  environment: Readonly<Record<string, string>> = {},
  parent: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const inherited = { ...parent } as Record<string, string>;
  if (environment.AWS_ACCESS_KEY_ID !== undefined) {
    delete inherited.AWS_PROFILE;
    delete inherited.AWS_SESSION_TOKEN;
  }
  return { ...inherited, ...environment };
}
