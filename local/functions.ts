import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { watch, type FSWatcher } from 'chokidar';
import { build } from 'esbuild';
import { FUNCTION_TIMEOUT_MS } from '../infra/time-budget';
import { PROJECT_ROOT } from '../project-root';
import { createLambdaContext } from './lambda-context.mjs';

export type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

const SOURCE_DIRS = ['functions', 'shared'];
/** Bundles live inside the project so their package imports resolve from its node_modules. */
const BUILD_DIR = join(PROJECT_ROOT, '.build', 'local');

export interface FunctionRuntime {
  /**
   * Invokes functions/<name>.ts with an event, as Lambda would, and returns its result. Rejects with
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

/**
 * Runs the handlers in functions/ the way Lambda does: each is bundled on its own with esbuild and
 * loaded as a separate module instance (its own cold start, config and SDK clients). With `watch`,
 * a change under functions/ or shared/ drops every loaded instance, so the next request gets a
 * fresh build: the server, and the data in its DynamoDB, stay up.
 */
export async function createFunctionRuntime(options: {
  watch?: boolean;
  onReload?: (file: string) => void;
  /** Folder holding functions/ and shared/; the project itself unless a test says otherwise. */
  sourceRoot?: string;
  /** Every function's timeout; the deployed one (infra/time-budget.ts) unless a test says otherwise. */
  timeoutMs?: number;
}): Promise<FunctionRuntime> {
  const sourceRoot = options.sourceRoot ?? PROJECT_ROOT;
  const timeoutMs = options.timeoutMs ?? FUNCTION_TIMEOUT_MS;
  const session = randomUUID().slice(0, 8);
  const buildDir = join(BUILD_DIR, session);
  await mkdir(buildDir, { recursive: true });
  // Each load gets its own file: import() caches modules by URL, and a new instance (after a
  // change, or after a timeout discarded the old one) must be a fresh module, a new cold start.
  let loads = 0;
  let instances = new Map<string, Promise<LambdaHandler>>();

  async function load(name: string): Promise<LambdaHandler> {
    const outfile = join(buildDir, `${name}.${++loads}.mjs`);
    await build({
      entryPoints: [join(sourceRoot, 'functions', `${name}.ts`)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      packages: 'external',
      sourcemap: 'inline',
      logLevel: 'silent',
    });
    const module = (await import(pathToFileURL(outfile).href)) as { handler?: LambdaHandler };
    if (typeof module.handler !== 'function') throw new Error(`functions/${name}.ts does not export a handler`);
    return module.handler;
  }

  // chokidar rather than fs.watch: an editor's atomic save (a temporary file renamed over the
  // source, as vim, `sed -i` and JetBrains' safe write do) replaces the watched inode, and fs.watch
  // then never reported that file again, silently (test/tools/watch-mode.test.ts).
  let watcher: FSWatcher | undefined;
  if (options.watch) {
    watcher = watch(
      SOURCE_DIRS.map((dir) => join(sourceRoot, dir)),
      { ignoreInitial: true },
    );
    watcher.on('all', (_event, path) => {
      instances = new Map();
      options.onReload?.(relative(sourceRoot, path));
    });
    await new Promise<void>((ready) => watcher!.once('ready', ready));
  }

  return {
    async invoke(name, event) {
      let instance = instances.get(name);
      if (!instance) {
        instance = load(name);
        instances.set(name, instance);
        // A failed build or cold start is retried on the next request rather than remembered.
        instance.catch(() => instances.get(name) === instance && instances.delete(name));
      }
      const handler = await instance;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          // Lambda discards a timed-out instance; its next invocation is a cold start.
          if (instances.get(name) === instance) instances.delete(name);
          reject(new FunctionTimeoutError(name, timeoutMs));
        }, timeoutMs);
      });
      try {
        return await Promise.race([handler(event, lambdaContext(name, timeoutMs)), timedOut]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await watcher?.close();
      await rm(buildDir, { recursive: true, force: true });
    },
  };
}

function lambdaContext(name: string, timeoutMs: number): Context {
  return createLambdaContext({
    functionName: `animal-store-local-${name}`,
    memoryLimitInMB: 256,
    timeoutMs,
    awsRequestId: randomUUID(),
    logStreamName: 'local',
    region: 'local',
    accountId: '000000000000',
  });
}
