import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invokeBundle } from '../lambda/lambda-runner';
import type { ColdSubject } from './cold-start';
import { median, rounded } from './statistics';
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

export interface InstructionComparison {
  /** Medians of the runs, component by component. */
  readonly function: InstructionCount;
  readonly floor: InstructionCount;
  readonly ratio: number;
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

/** Each run in a fresh process serving its first request, as tools/bench/cold-start.ts does, but under callgrind. */
export async function compareInstructions(node: string, fn: ColdSubject, floor: ColdSubject, runs: number): Promise<InstructionComparison> {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-callgrind-'));
  try {
    // invokeBundle starts "node runner.mjs …" with exactly the environment it is given: the
    // wrapper writes where the environment says.
    const wrapper = underCallgrind(node, join(work, 'node'), '--callgrind-out-file="$CALLGRIND_OUT"');
    const counts = { function: [] as InstructionCount[], floor: [] as InstructionCount[] };
    for (let run = 0; run < runs; run++) {
      for (const which of ['function', 'floor'] as const) {
        const subject = which === 'function' ? fn : floor;
        const out = join(work, `${which}-${run}.callgrind`);
        const invocation = await invokeBundle(wrapper, {
          taskRoot: subject.taskRoot,
          env: { ...subject.env, CALLGRIND_OUT: out },
          events: [subject.event],
        });
        subject.expect(invocation.results[0]);
        counts[which].push(readCounts(out));
      }
    }
    const medians = (taken: InstructionCount[]): InstructionCount => {
      const of = (part: keyof InstructionCount) => median(taken.map((count) => count[part]));
      return { total: of('total'), loadParse: of('loadParse'), firstRunCompile: of('firstRunCompile'), gc: of('gc') };
    };
    const [fnCount, floorCount] = [medians(counts.function), medians(counts.floor)];
    return { function: fnCount, floor: floorCount, ratio: rounded(fnCount.total / floorCount.total) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A script to start in node's place: it runs the same node under callgrind with `options`. */
function underCallgrind(node: string, path: string, options: string): string {
  writeFileSync(path, `#!/bin/sh\nexec valgrind --tool=callgrind ${options} "${node}" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Instructions per warm request, all threads together, of a function and of its floor. */
export type WarmInstructionComparison = { readonly function: number; readonly floor: number; readonly ratio: number };

/**
 * Each in a warm runner of its own (tools/bench/warm.ts) under callgrind, counting the recorded rounds
 * alone: callgrind dumps its count at each call of node's ResourceUsage, which the runner makes just
 * before the rounds and just after, so the second dump holds them. Returns what the function answered, too.
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
      const wrapper = underCallgrind(node, join(work, which), `--dump-before='node::ResourceUsage*' --callgrind-out-file="${out}"`);
      const [result] = await measureWarm(wrapper, [subject], { ...options, markRounds: true });
      const totals = /^totals: (\d+)$/m.exec(readFileSync(`${out}.2`, 'utf8'))?.[1];
      if (totals === undefined || existsSync(`${out}.3`)) throw new Error(`${which}: callgrind did not cut the rounds out alone`);
      return { result: result!, instructions: Number(totals) / result!.requests };
    };
    const measured = { function: await perRequest(fn, 'function'), floor: await perRequest(floor, 'floor') };
    return {
      function: Math.round(measured.function.instructions),
      floor: Math.round(measured.floor.instructions),
      ratio: rounded(measured.function.instructions / measured.floor.instructions),
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
