import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quantile } from './statistics';

/** One handler the warm runner invokes over and over. */
export interface WarmSubject {
  /** How the tables name it. */
  readonly label: string;
  /** Directory of its index.mjs. */
  readonly taskRoot: string;
  /** The environment it is imported with. */
  readonly env: Record<string, string>;
  /** The events it is invoked with, in turn. */
  readonly events: readonly unknown[];
}

export interface WarmResult {
  readonly label: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time (user and system) per request, in microseconds, over all the requests. */
  readonly cpuUsPerRequest: number;
  /** The same, batch by batch, in the order of the rounds: what the warm verdict pairs with the floor's. */
  readonly cpuUsPerBatch: readonly number[];
  /** Bytes written to stdout and stderr per request: what CloudWatch Logs ingests from the function. */
  readonly logBytesPerRequest: number;
  readonly requests: number;
  /** How the requests were answered (status code, or the authorizer's verdict): a benchmark of errors would mean nothing. */
  readonly statuses: Readonly<Record<string, number>>;
}

export interface WarmOptions {
  /** Rounds of interleaved batches: each is one pair the warm verdict compares, so many of them. */
  readonly rounds: number;
  /** Requests per subject per round: few, so a function's batch and its floor's meet the machine in the same state. */
  readonly batch: number;
  /** Unrecorded requests per subject first: cold start, JIT, first connection. */
  readonly warmup: number;
}

/**
 * Imports the subjects into one fresh process of the runtime's Node and invokes them in interleaved
 * batches (the order reversed every round), so a function and its floor meet the same machine at the
 * same moment. dynalite runs in the calling process: the CPU measured is the handler's alone.
 */
export async function measureWarm(node: string, subjects: readonly WarmSubject[], options: WarmOptions): Promise<WarmResult[]> {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-warm-'));
  try {
    const configFile = join(work, 'config.json');
    const resultFile = join(work, 'result.json');
    writeFileSync(configFile, JSON.stringify({ subjects, ...options }));
    const child = spawn(node, [join(import.meta.dirname, 'warm-runner.mjs'), configFile, resultFile], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`The warm runner failed (exit ${code}):\n${stderr.slice(-4000)}`);
    const raw = JSON.parse(readFileSync(resultFile, 'utf8')) as Array<{
      label: string;
      latenciesMs: number[];
      cpuUsPerRequest: number;
      cpuUsPerBatch: number[];
      logBytesPerRequest: number;
      statuses: Record<string, number>;
    }>;
    return raw.map((subject) => ({
      label: subject.label,
      p50Ms: quantile(subject.latenciesMs, 0.5),
      p99Ms: quantile(subject.latenciesMs, 0.99),
      cpuUsPerRequest: subject.cpuUsPerRequest,
      cpuUsPerBatch: subject.cpuUsPerBatch,
      logBytesPerRequest: subject.logBytesPerRequest,
      requests: subject.latenciesMs.length,
      statuses: subject.statuses,
    }));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
