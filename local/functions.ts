import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { watch, type FSWatcher } from 'chokidar';
import { build } from 'esbuild';
import { FUNCTION_TIMEOUT_MS } from '../src/facts/time-budget';
import { HANDLERS_DIR, PROJECT_ROOT, SOURCE_DIR } from '../project-root';
import { type OutputStream, writeLine } from '../src/runtime/output';

/** Bundles live inside the project so their package imports resolve from its node_modules. */
const BUILD_DIR = join(PROJECT_ROOT, '.build', 'local');
const INSTANCE_SCRIPT = new URL('./function-instance.mjs', import.meta.url);

export interface FunctionRuntime {
  /**
   * Invokes src/handlers/<name>.ts with an event, as Lambda would, and returns its result. Rejects with
   * FunctionTimeoutError when the handler outlives the function timeout.
   */
  invoke(name: string, event: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/** Lambda's "Task timed out": the invocation failed, and its instance is not used again. */
export class FunctionTimeoutError extends Error {
  constructor(name: string, timeoutMs: number) {
    super(`${name}: Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`);
    this.name = 'FunctionTimeoutError';
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

/** One function instance: a worker thread running local/function-instance.mjs. */
interface Instance {
  readonly worker: Worker;
  /** Settles when the bundle is imported (the cold start), or fails with it. */
  readonly ready: Promise<void>;
  readonly pending: Map<number, { resolve(result: unknown): void; reject(error: Error): void }>;
  inFlight: number;
  /** Replaced by a newer build: ends once its last invocation has. */
  retired: boolean;
}

/**
 * Runs the handlers in src/handlers/ the way Lambda does: each is bundled on its own with esbuild and
 * runs as an instance of its own, in a worker thread with its own environment, module instance,
 * config and SDK clients, as a Lambda instance has its own sandbox. `environment` is what the
 * stack would set on the function; it is laid over this process's environment, which the instance
 * never writes back to. With `watch`, a change under src/ retires every instance,
 * so the next request gets a fresh build: the server, and the data in its DynamoDB, stay up.
 */
export async function createFunctionRuntime(options: {
  watch?: boolean;
  onReload?: (file: string) => void;
  /** The functions' environment, as the stack would set it (prepareLocalStage in local/dynamodb-local.ts). */
  environment?: Readonly<Record<string, string>>;
  /** Variables laid over one function's environment, by handler file name: a fault a test injects. */
  environmentOf?: (name: string) => Readonly<Record<string, string>> | undefined;
  /** Folder holding src/; the project itself unless a test says otherwise. */
  sourceRoot?: string;
  /** Every function's timeout; the deployed one (src/facts/time-budget.ts) unless a test says otherwise. */
  timeoutMs?: number;
}): Promise<FunctionRuntime> {
  const sourceRoot = options.sourceRoot ?? PROJECT_ROOT;
  const timeoutMs = options.timeoutMs ?? FUNCTION_TIMEOUT_MS;
  const session = randomUUID().slice(0, 8);
  const buildDir = join(BUILD_DIR, session);
  await mkdir(buildDir, { recursive: true });
  // Each build gets its own file: a new instance (after a change, or after a timeout discarded the
  // old one) must be a fresh module, a new cold start.
  let builds = 0;
  let invocations = 0;
  let instances = new Map<string, Promise<Instance>>();
  const running = new Set<Instance>();

  async function start(name: string): Promise<Instance> {
    const outfile = join(buildDir, `${name}.${++builds}.mjs`);
    await build({
      entryPoints: [join(sourceRoot, HANDLERS_DIR, `${name}.ts`)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      packages: 'external',
      sourcemap: 'inline',
      logLevel: 'silent',
    });
    const worker = new Worker(INSTANCE_SCRIPT, {
      env: instanceEnvironment({ ...options.environment, ...options.environmentOf?.(name) }),
      workerData: { bundleUrl: pathToFileURL(outfile).href, functionName: `animal-store-local-${name}`, timeoutMs },
      stdout: true,
      stderr: true,
    });
    forwardLines(worker.stdout, 'stdout');
    forwardLines(worker.stderr, 'stderr');
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    const instance: Instance = { worker, ready, pending: new Map(), inFlight: 0, retired: false };
    running.add(instance);
    worker.on('message', (message: InstanceMessage) => {
      switch (message.type) {
        case 'ready':
          return markReady();
        case 'failed':
          return failReady(new FunctionError(message.error));
        case 'result':
          return instance.pending.get(message.id)?.resolve(message.result);
        case 'error':
          return instance.pending.get(message.id)?.reject(new FunctionError(message.error));
      }
    });
    const ended = (error: Error) => {
      running.delete(instance);
      failReady(error);
      for (const { reject } of instance.pending.values()) reject(error);
    };
    worker.on('error', ended);
    worker.on('exit', () => ended(new Error(`${name}: the function instance exited`)));
    await ready.catch(async (error) => {
      await worker.terminate();
      throw error;
    });
    return instance;
  }

  // chokidar rather than fs.watch: an editor's atomic save (a temporary file renamed over the
  // source, as vim, `sed -i` and JetBrains' safe write do) replaces the watched inode, and fs.watch
  // then never reported that file again, silently (test/local/watch-mode.test.ts).
  let watcher: FSWatcher | undefined;
  if (options.watch) {
    watcher = watch([join(sourceRoot, SOURCE_DIR)], { ignoreInitial: true });
    watcher.on('all', (_event, path) => {
      for (const instance of instances.values()) void instance.then(retire, () => undefined);
      instances = new Map();
      options.onReload?.(relative(sourceRoot, path));
    });
    await new Promise<void>((ready) => watcher!.once('ready', ready));
  }

  function retire(instance: Instance): void {
    instance.retired = true;
    if (instance.inFlight === 0) void instance.worker.terminate();
  }

  return {
    async invoke(name, event) {
      let starting = instances.get(name);
      if (!starting) {
        starting = start(name);
        instances.set(name, starting);
        // A failed build or cold start is retried on the next request rather than remembered.
        starting.catch(() => instances.get(name) === starting && instances.delete(name));
      }
      const instance = await starting;
      const id = ++invocations;
      instance.inFlight++;
      let timer: NodeJS.Timeout | undefined;
      try {
        return await new Promise<unknown>((resolve, reject) => {
          instance.pending.set(id, { resolve, reject });
          timer = setTimeout(() => {
            // Lambda discards a timed-out instance, whatever it was doing; the next invocation is a cold start.
            if (instances.get(name) === starting) instances.delete(name);
            reject(new FunctionTimeoutError(name, timeoutMs));
            void instance.worker.terminate();
          }, timeoutMs);
          instance.worker.postMessage({ id, event });
        });
      } finally {
        clearTimeout(timer);
        instance.pending.delete(id);
        instance.inFlight--;
        if (instance.retired && instance.inFlight === 0) void instance.worker.terminate();
      }
    },
    async close() {
      await watcher?.close();
      await Promise.all([...running].map((instance) => instance.worker.terminate()));
      await rm(buildDir, { recursive: true, force: true });
    },
  };
}

/**
 * What an instance writes to its stdout or stderr, line by line through this process's one writer, so
 * that its lines never interleave with others. The instance waits for them to be read before it answers.
 */
function forwardLines(output: Readable, stream: OutputStream): void {
  createInterface({ input: output, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => writeLine(stream, line));
}

type InstanceMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: { name: string; message: string; stack?: string } }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: { name: string; message: string; stack?: string } };

/**
 * An instance's environment: this process's, with the function's laid over it. Local credentials
 * replace any the developer's shell has, profile and session token included.
 */
function instanceEnvironment(environment: Readonly<Record<string, string>> = {}): Record<string, string> {
  const inherited = { ...process.env } as Record<string, string>;
  if (environment.AWS_ACCESS_KEY_ID !== undefined) {
    delete inherited.AWS_PROFILE;
    delete inherited.AWS_SESSION_TOKEN;
  }
  return { ...inherited, ...environment };
}
