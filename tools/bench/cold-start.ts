import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { invokeBundle } from '../lambda/lambda-runner';
import { median, rounded, spread, type Spread } from './statistics';

/** A bundle to start cold, again and again. */
export interface ColdSubject {
  readonly taskRoot: string;
  readonly env: Record<string, string>;
  readonly event: unknown;
  /** Checks the first answer, so an error path is never what gets measured. */
  readonly expect: (result: any) => void;
}

export interface BundleSize {
  readonly bytes: number;
  readonly gzipBytes: number;
}

export interface ColdStartFigures {
  readonly size: BundleSize;
  /** From the process's start to its first answer. */
  readonly firstResponseMs: Spread;
  /** CPU time used by then. */
  readonly cpuMs: Spread;
  readonly rssMiB: Spread;
}

export interface ColdStartComparison {
  readonly function: ColdStartFigures;
  readonly floor: ColdStartFigures;
  /**
   * The function's time to first response over the floor's: the median of the ratios of each run's
   * pair (started one after the other), so a slow moment of the machine weighs on both sides of a pair.
   */
  readonly ratio: number;
}

export function bundleSize(taskRoot: string): BundleSize {
  const code = readFileSync(join(taskRoot, 'index.mjs'));
  return { bytes: code.length, gzipBytes: gzipSync(code).length };
}

/**
 * Starts the function and its floor `runs` times each, alternating (and swapping which goes first
 * every run), each in a fresh process of the runtime's Node that imports the bundle and serves one
 * event: a cold start as Lambda's INIT and first INVOKE, minus the sandbox and code download.
 */
export async function compareColdStarts(node: string, fn: ColdSubject, floor: ColdSubject, runs: number): Promise<ColdStartComparison> {
  const samples = {
    function: [] as Array<{ ms: number; cpu: number; rss: number }>,
    floor: [] as Array<{ ms: number; cpu: number; rss: number }>,
  };
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? (['function', 'floor'] as const) : (['floor', 'function'] as const);
    for (const which of order) {
      const subject = which === 'function' ? fn : floor;
      const invocation = await invokeBundle(node, { taskRoot: subject.taskRoot, env: subject.env, events: [subject.event] });
      subject.expect(invocation.results[0]);
      const { firstResponseMs, cpuMs, rssBytes } = invocation.coldStart;
      samples[which].push({ ms: firstResponseMs, cpu: cpuMs, rss: rssBytes / 2 ** 20 });
    }
  }
  const figures = (subject: ColdSubject, taken: Array<{ ms: number; cpu: number; rss: number }>): ColdStartFigures => ({
    size: bundleSize(subject.taskRoot),
    firstResponseMs: spread(taken.map((sample) => sample.ms)),
    cpuMs: spread(taken.map((sample) => sample.cpu)),
    rssMiB: spread(taken.map((sample) => sample.rss)),
  });
  const pairRatios = samples.function.map((sample, run) => sample.ms / samples.floor[run]!.ms);
  return { function: figures(fn, samples.function), floor: figures(floor, samples.floor), ratio: rounded(median(pairRatios)) };
}
