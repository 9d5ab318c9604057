import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handlerFile } from '../lambda/lambda-runner';
import { quantile } from './statistics';

/** One handler the warm runner invokes over and over. */
export interface WarmSubject {
  readonly label: string;
  /** Directory of its handler file (tools/lambda/lambda-runner.ts, handlerFile). */
  readonly taskRoot: string;
  readonly env: Record<string, string>;
  /** One per request, handed in turn from the first warm-up request on (tools/bench/bench-events.ts, inTurn): one alone is every request's. */
  readonly events: readonly unknown[];
}

export interface WarmResult {
  readonly label: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time (user and system) per request, in microseconds, over all the requests. */
  readonly cpuUsPerRequest: number;
  /** Bytes written to stdout and stderr per request: what CloudWatch Logs ingests from the function. */
  readonly logBytesPerRequest: number;
  readonly requests: number;
  /** How the requests were answered (status code, or the authorizer's verdict): a benchmark of errors would mean nothing. */
  readonly statuses: Readonly<Record<string, number>>;
}

/** What the runner writes of each subject. */
type RunnerResult = Omit<WarmResult, 'p50Ms' | 'p99Ms' | 'requests'> & { readonly latenciesMs: number[] };

export interface WarmOptions {
  /** Rounds of interleaved batches, alternating which subject goes first. */
  readonly rounds: number;
  /** Requests per subject per round: few, so a function's batch and its floor's meet the machine in the same state. */
  readonly batch: number;
  /** Unrecorded requests per subject first: cold start, JIT, first connection. */
  readonly warmup: number;
  /** Collects all garbage before each round and calls process.resourceUsage() just before and after it, for callgrind to count each round alone. */
  readonly markRounds?: boolean;
}

/** Interleaved batches in one process, so function and floor meet the machine alike; dynalite runs here, out of the CPU measured. */
export async function measureWarm(node: string, subjects: readonly WarmSubject[], options: WarmOptions): Promise<WarmResult[]> {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-warm-'));
  try {
    const configFile = join(work, 'config.json');
    const resultFile = join(work, 'result.json');
    // Each subject's handler file, found as Lambda's runtime finds it: the runner loads it by its kind.
    const loadable = subjects.map((subject) => ({ ...subject, file: handlerFile(subject.taskRoot) }));
    writeFileSync(configFile, JSON.stringify({ subjects: loadable, ...options }));
    const gc = options.markRounds ? ['--expose-gc'] : [];
    const child = spawn(node, [...gc, join(import.meta.dirname, 'warm-runner.mjs'), configFile, resultFile], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) throw new Error(`The warm runner failed (exit ${code}):\n${stderr.slice(-4000)}`);
    const raw = JSON.parse(readFileSync(resultFile, 'utf8')) as RunnerResult[];
    return raw.map(({ label, latenciesMs, statuses, ...perRequest }) => ({
      label,
      p50Ms: quantile(latenciesMs, 0.5),
      p99Ms: quantile(latenciesMs, 0.99),
      ...perRequest,
      requests: latenciesMs.length,
      statuses,
    }));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
