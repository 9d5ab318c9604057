import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { handlerFile, invokeBundle } from '../lambda/lambda-runner';
import { median, rounded, spread, type Spread } from './statistics';

export interface ColdSubject {
  readonly taskRoot: string;
  readonly env: Record<string, string>;
  /** The first request of each run, taken in turn (tools/bench/bench-events.ts, inTurn): one alone is every run's. */
  readonly events: readonly unknown[];
  /** Checks the first answer, so an error path is never what gets measured. */
  readonly expect: (result: any) => void;
}

type Sample = { ms: number; cpu: number; rss: number };

export interface ColdStartFigures {
  readonly size: { readonly bytes: number; readonly gzipBytes: number };
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
   * Time to first response over the floor's: the median of each run's pair (started one after the other), so a
   * slow moment of the machine weighs on both sides of a pair.
   */
  readonly ratio: number;
}

/** The request a subject's run starts with. */
export function eventOfRun(subject: ColdSubject, run: number): unknown {
  return subject.events[run % subject.events.length];
}

function bundleSize(taskRoot: string) {
  const code = readFileSync(handlerFile(taskRoot));
  return { bytes: code.length, gzipBytes: gzipSync(code).length };
}

/** Function and floor in turn (the first swapped every run), each a fresh process: INIT and first INVOKE, less sandbox and download. */
export async function compareColdStarts(node: string, fn: ColdSubject, floor: ColdSubject, runs: number): Promise<ColdStartComparison> {
  const samples = { function: [] as Sample[], floor: [] as Sample[] };
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? (['function', 'floor'] as const) : (['floor', 'function'] as const);
    for (const which of order) {
      const subject = which === 'function' ? fn : floor;
      const invocation = await invokeBundle(node, { taskRoot: subject.taskRoot, env: subject.env, events: [eventOfRun(subject, run)] });
      subject.expect(invocation.results[0]);
      const { firstResponseMs, cpuMs, rssBytes } = invocation.coldStart;
      samples[which].push({ ms: firstResponseMs, cpu: cpuMs, rss: rssBytes / 2 ** 20 });
    }
  }
  const figures = (subject: ColdSubject, taken: Sample[]): ColdStartFigures => ({
    size: bundleSize(subject.taskRoot),
    firstResponseMs: spread(taken.map((sample) => sample.ms)),
    cpuMs: spread(taken.map((sample) => sample.cpu)),
    rssMiB: spread(taken.map((sample) => sample.rss)),
  });
  const pairRatios = samples.function.map((sample, run) => sample.ms / samples.floor[run]!.ms);
  return { function: figures(fn, samples.function), floor: figures(floor, samples.floor), ratio: rounded(median(pairRatios)) };
}
