import { enableCompileCache } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Node's compile cache, for this process and its test workers and for the processes the suites spawn (npm start,
 * npm run invoke, the tools): they all load the same sources and SDK, so all but the first skip most of compiling them.
 */
const COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ?? join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');
enableCompileCache(COMPILE_CACHE);

/** The files that read the synthesized app: they share one synthesis (test/helpers/synthesized-app.ts). */
const INFRA = ['test/infra/**/*.test.ts', 'test/tools/costs.test.ts'];

export default defineConfig({
  test: {
    // Integration suites start dynalite and bundle handlers; CDK synthesis takes seconds too.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Vitest's default, one worker fewer than the cores, is a single worker on a 2-core CI runner:
    // every file then waits on the one before, though most of a file's time is spent waiting on
    // the processes and servers it starts. Two workers overlap those waits.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Functions log at WARN and above on purpose in some suites; silence them, and their metric
    // lines, and the local runtime's START and REPORT lines, unless a test asks (test/api/metrics.test.ts,
    // test/local/console-log.test.ts do).
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      SYSTEM_LOG_LEVEL: 'WARN',
      NODE_COMPILE_CACHE: COMPILE_CACHE,
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'infra',
          include: INFRA,
          // CDK bundles assets with process.chdir, which a worker thread may not call.
          pool: 'forks',
          // A worker runs infra file after infra file in one module graph, so the app it synthesized
          // and bundled for its first (test/helpers/synthesized-app.ts) serves the next ones.
          isolate: false,
          // One worker: a second would synthesize and bundle the whole app again to save
          // little time. Vitest runs projects of different worker counts one after the other: this one first.
          maxWorkers: 1,
          sequence: { groupOrder: 0 },
          globalSetup: ['test/helpers/synthesis-dir.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'rest',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...INFRA],
          // Threads, not processes: a test file starts and loads its modules for less CPU in a thread.
          pool: 'threads',
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
