import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FUNCTION_RUNTIME } from '../../infra/api-function';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/** 24 for `nodejs24.x`. */
export const RUNTIME_MAJOR = /^nodejs(\d+)\.x$/.exec(FUNCTION_RUNTIME.name)?.[1] ?? 'unknown';

/** This process's Node when npm scripts put the project's `node` package (the runtime's major) first on PATH, else its binary. */
export function runtimeNode(): string {
  const candidates = [process.execPath, join(PROJECT_ROOT, 'node_modules', '.bin', 'node')];
  for (const candidate of candidates) {
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    if (version.startsWith(`v${RUNTIME_MAJOR}.`)) return candidate;
  }
  throw new Error(`No Node.js ${RUNTIME_MAJOR} found (tried ${candidates.join(', ')}); run npm install.`);
}

const LAMBDA_CONTEXT_MODULE = pathToFileURL(join(PROJECT_ROOT, 'local', 'lambda-context.mjs')).href;

/** The handler file Lambda's runtime loads from a task root: index.js (required) if there is one, else index.mjs (imported). */
export function handlerFile(taskRoot: string): string {
  const required = join(taskRoot, 'index.js');
  return existsSync(required) ? required : join(taskRoot, 'index.mjs');
}

/**
 * Loads the handler file (handlerFile) as Lambda's runtime does, index.js required and index.mjs imported, and
 * invokes it per event; results go to a file, as stdout is the function's logs.
 */
const RUNNER = `
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { lambdaContextFromEnvironment } from ${JSON.stringify(LAMBDA_CONTEXT_MODULE)};

const [file, eventsFile, resultFile] = process.argv.slice(2);
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const module = file.endsWith('.mjs') ? await import(pathToFileURL(file).href) : createRequire(import.meta.url)(file);
if (typeof module.handler !== 'function') throw new Error('The handler file exports no handler');
const results = [];
let invokeMs;
let coldStart;
for (const [index, event] of events.entries()) {
  const context = lambdaContextFromEnvironment('bundle-check-' + index, 'bundle-check');
  const invoked = performance.now();
  results.push(await module.handler(event, context));
  if (invokeMs === undefined) {
    invokeMs = performance.now() - invoked;
    // performance.now() counts from the process's start: this is the whole cold start, Node's own included.
    const cpu = process.cpuUsage();
    coldStart = { firstResponseMs: performance.now(), cpuMs: (cpu.user + cpu.system) / 1000, rssBytes: process.memoryUsage.rss(), modulesLoaded: process.moduleLoadList };
  }
}
writeFileSync(resultFile, JSON.stringify({ firstInvokeMs: invokeMs, coldStart, results }));
`;

export interface Invocation {
  readonly results: any[];
  /** Time of the first invocation (cold SDK client, first connection). */
  readonly firstInvokeMs: number;
  readonly coldStart: {
    /** From the process's start to the first handler's answer, Node's own start-up included. */
    readonly firstResponseMs: number;
    /** CPU time (user and system) the process had used by then. */
    readonly cpuMs: number;
    readonly rssBytes: number;
    /** Node's own modules and bindings loaded by then, the runner's included (process.moduleLoadList). */
    readonly modulesLoaded: readonly string[];
  };
  readonly stdout: string;
  readonly stderr: string;
}

export interface InvokeOptions {
  /** The asset directory: exactly what would be uploaded to Lambda. */
  readonly taskRoot: string;
  /** The complete environment; nothing is inherited from the test process. */
  readonly env: Record<string, string>;
  readonly events: readonly unknown[];
}

/** Runs a bundle in a fresh process of the runtime's Node version, as a cold Lambda instance would. */
export async function invokeBundle(node: string, options: InvokeOptions): Promise<Invocation> {
  assertNoNodeModulesAbove(options.taskRoot);
  const work = mkdtempSync(join(tmpdir(), 'animal-store-invoke-'));
  try {
    const runner = join(work, 'runner.mjs');
    const eventsFile = join(work, 'events.json');
    const resultFile = join(work, 'result.json');
    writeFileSync(runner, RUNNER);
    writeFileSync(eventsFile, JSON.stringify(options.events));
    const child = spawn(node, [runner, handlerFile(options.taskRoot), eventsFile, resultFile], {
      cwd: options.taskRoot,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) {
      // Node quotes the failing line, which in a minified bundle is the whole bundle.
      const output = `${stderr}\n${stdout}`.split('\n').map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line));
      throw new Error(`The bundle in ${options.taskRoot} failed (exit ${code}):\n${output.join('\n')}`);
    }
    return { ...JSON.parse(readFileSync(resultFile, 'utf8')), stdout, stderr };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A node_modules above the bundle would hide a dependency the bundle forgot to include. */
function assertNoNodeModulesAbove(dir: string): void {
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, 'node_modules'))) {
      throw new Error(`${join(current, 'node_modules')} would resolve imports the bundle in ${dir} should contain`);
    }
    if (dirname(current) === current) return;
  }
}
