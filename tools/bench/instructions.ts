import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invokeBundle } from '../lambda/lambda-runner';
import { eventOfRun, type ColdSubject } from './cold-start';
import type { FloorBuild } from './floors';
import { judgedRatio, median, type JudgedRatio } from './statistics';
import { measureWarm, type WarmOptions, type WarmResult, type WarmSubject } from './warm';

// Cold starts and warm requests counted in instructions under callgrind (`npm run bench -- --instructions`): the
// verdicts' unit, steady to about 0.1 % where time ratios move with the machine. Waiting on DynamoDB costs none.

/** Instructions a cold start executed, all threads together, and where some of them went. */
export interface InstructionCount {
  readonly total: number;
  /** Parsing scripts whole as they load: the part of a cold start that grows with bundle bytes. */
  readonly loadParse: number;
  /** Compiling each function the first time it runs: grows with the code that runs while starting. */
  readonly firstRunCompile: number;
  /** Garbage collection on the main thread. */
  readonly gc: number;
}

export interface InstructionComparison<TBuild extends FloorBuild = FloorBuild> {
  /** Medians of the runs, component by component. */
  readonly function: InstructionCount;
  /** Against each build of its floor counted (tools/bench/floors.ts): the floor's medians, and the ratio of the totals. */
  readonly floors: Readonly<Record<TBuild, { readonly floor: InstructionCount } & JudgedRatio>>;
  /** Each run's total, by side: what a request meeting several functions cold adds up (tools/bench/measure-answer-classes.ts). */
  readonly runTotals: Readonly<Record<'function' | TBuild, readonly number[]>>;
}

/**
 * Inclusive counts of V8 functions, by the symbol names callgrind_annotate prints. `randomStart` is left out of every
 * total: V8's random hash seed at start is a random amount of work that would swamp the differences.
 */
const SYMBOLS = {
  randomStart: 'v8::internal::HashSeed::InitializeRoots(',
  loadParse: 'v8::internal::Parser::ParseProgram(',
  firstRunCompile: 'v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::DirectHandle<v8::internal::JSFunction>',
  gc: 'v8::internal::Heap::CollectGarbage(',
} as const;

export function valgrindInstalled(): boolean {
  // callgrind_annotate comes in the same Debian package.
  return spawnSync('valgrind', ['--version']).status === 0;
}

/**
 * Each run in a fresh process serving its first request, as tools/bench/cold-start.ts does, but under callgrind: the
 * function, then each of the floors given.
 */
export async function compareInstructions<TBuild extends FloorBuild>(
  node: string,
  fn: ColdSubject,
  floors: Readonly<Record<TBuild, ColdSubject>>,
  runs: number,
): Promise<InstructionComparison<TBuild>> {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-callgrind-'));
  try {
    // invokeBundle starts "node runner.mjs …" with exactly the environment it is given: the
    // wrapper writes where the environment says.
    const wrapper = underCallgrind(node, join(work, 'node'), '--callgrind-out-file="$CALLGRIND_OUT"');
    const subjects = { function: fn, ...floors };
    const counts = Object.fromEntries(Object.keys(subjects).map((which) => [which, [] as InstructionCount[]]));
    for (let run = 0; run < runs; run++) {
      for (const [which, subject] of Object.entries(subjects)) {
        const out = join(work, `${which}-${run}.callgrind`);
        const invocation = await invokeBundle(wrapper, {
          taskRoot: subject.taskRoot,
          env: { ...subject.env, CALLGRIND_OUT: out },
          events: [eventOfRun(subject, run)],
        });
        subject.expect(invocation.results[0]);
        counts[which]!.push(readCounts(out));
      }
    }
    const medians = (taken: InstructionCount[]): InstructionCount => {
      const of = (part: keyof InstructionCount) => median(taken.map((count) => count[part]));
      return { total: of('total'), loadParse: of('loadParse'), firstRunCompile: of('firstRunCompile'), gc: of('gc') };
    };
    const totals = (which: string) => counts[which]!.map((count) => count.total);
    const against = (build: TBuild) => ({ floor: medians(counts[build]!), ...judgedRatio(totals('function'), totals(build)) });
    const builds = Object.keys(floors) as TBuild[];
    return {
      function: medians(counts.function!),
      floors: Object.fromEntries(builds.map((build) => [build, against(build)])) as InstructionComparison<TBuild>['floors'],
      runTotals: Object.fromEntries(['function', ...builds].map((which) => [which, totals(which)])) as Record<
        'function' | TBuild,
        number[]
      >,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A script to start in node's place: it runs the same node, with `nodeFlags` first, under callgrind with `options`. */
function underCallgrind(node: string, path: string, options: string, nodeFlags = ''): string {
  writeFileSync(path, `#!/bin/sh\nexec valgrind --tool=callgrind ${options} "${node}" ${nodeFlags} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Instructions per warm request, all threads together, in each counted window of one side. */
export interface WindowCounts {
  readonly median: number;
  readonly windows: readonly number[];
}

/** Instructions per warm request of a function and of its floor, and their ratio. */
export type WarmInstructionComparison = { readonly function: WindowCounts; readonly floor: WindowCounts } & JudgedRatio;

// What would decide where work falls rather than how much a request does (docs/performance.md, "The verdicts:
// instructions"): V8 runs no tier above its baseline compiler, since a burst of optimizing compiles (and the
// recompiles each full collection sets off) landed in one window and not the next; and its collections follow a
// fixed schedule, since heap growth sized from measured GC speed let a major collection start in one window and
// not the others.
const WARM_NODE_FLAGS = '--max-opt=1 --predictable-gc-schedule';

/**
 * Each in a warm runner of its own (tools/bench/warm.ts) under callgrind, counting each window (one round of
 * `options`) alone: the runner collects all garbage before a window and calls node's ResourceUsage just before and
 * just after it, and callgrind dumps its count at each such call, so the even dumps hold the windows. Returns what
 * the function answered, too.
 */
export async function compareWarmInstructions(
  node: string,
  fn: WarmSubject,
  floor: WarmSubject,
  options: WarmOptions,
): Promise<WarmInstructionComparison & { readonly answered: WarmResult }> {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-callgrind-'));
  try {
    const perRequest = async (subject: WarmSubject, which: string) => {
      const out = join(work, `${which}.callgrind`);
      const wrapper = underCallgrind(
        node,
        join(work, which),
        `--dump-before='node::ResourceUsage*' --callgrind-out-file="${out}"`,
        WARM_NODE_FLAGS,
      );
      const [result] = await measureWarm(wrapper, [subject], { ...options, markRounds: true });
      const windows = Array.from({ length: options.rounds }, (_, index) => {
        const totals = /^totals: (\d+)$/m.exec(readFileSync(`${out}.${2 * (index + 1)}`, 'utf8'))?.[1];
        if (totals === undefined) throw new Error(`${which}: callgrind wrote no count of window ${index + 1}`);
        return Math.round(Number(totals) / options.batch);
      });
      if (existsSync(`${out}.${2 * options.rounds + 1}`)) throw new Error(`${which}: callgrind did not cut the windows out alone`);
      return { result: result!, counts: { median: median(windows), windows } };
    };
    const measured = { function: await perRequest(fn, 'function'), floor: await perRequest(floor, 'floor') };
    return {
      function: measured.function.counts,
      floor: measured.floor.counts,
      ...judgedRatio(measured.function.counts.windows, measured.floor.counts.windows),
      answered: measured.function.result,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function readCounts(file: string): InstructionCount {
  return countsFromAnnotation(
    execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 }),
  );
}

/** The counts in callgrind_annotate's inclusive report; a part whose symbol is missing is NaN. */
export function countsFromAnnotation(report: string): InstructionCount {
  const lines = report.split('\n');
  const count = (line: string | undefined) => Number(/^\s*([\d,]+)/.exec(line ?? '')?.[1]?.replaceAll(',', '') ?? Number.NaN);
  // The first line naming the symbol: callgrind_annotate lists functions by inclusive count, largest first.
  const of = (symbol: string) => count(lines.find((line) => line.includes(`:${symbol}`)));
  const randomStart = of(SYMBOLS.randomStart);
  return {
    total: count(lines.find((line) => line.includes('PROGRAM TOTALS'))) - (Number.isNaN(randomStart) ? 0 : randomStart),
    loadParse: of(SYMBOLS.loadParse),
    firstRunCompile: of(SYMBOLS.firstRunCompile),
    gc: of(SYMBOLS.gc),
  };
}
