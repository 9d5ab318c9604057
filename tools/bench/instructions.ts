import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invokeBundle } from '../lambda/lambda-runner';
import type { ColdSubject } from './cold-start';
import { median, rounded } from './statistics';

// Cold starts counted in instructions under callgrind (`npm run bench -- --instructions`): steadier than time, so they
// weigh a small change, but not a verdict, since instructions are not time.

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

/** Left out of every total, `randomStart` is a random amount of work (V8's hash seed) that would swamp the differences. */
const SYMBOLS = {
  randomStart: 'v8::internal::HashSeed::InitializeRoots(',
  loadParse: 'v8::internal::Parser::ParseProgram(',
  firstRunCompile: 'v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::DirectHandle<v8::internal::JSFunction>',
  gc: 'v8::internal::Heap::CollectGarbage(',
} as const;

export function valgrindInstalled(): boolean {
  try {
    // Both come with Debian's valgrind package (callgrind_annotate's --version exits 255).
    execFileSync('sh', ['-c', 'command -v valgrind && command -v callgrind_annotate'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Each run in a fresh process serving its first request, as tools/bench/cold-start.ts does, but under callgrind. */
export async function compareInstructions(node: string, fn: ColdSubject, floor: ColdSubject, runs: number): Promise<InstructionComparison> {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-callgrind-'));
  try {
    // invokeBundle starts "node runner.mjs …" with exactly the environment it is given: a wrapper
    // in node's place runs the same under callgrind, writing where the environment says.
    const wrapper = join(work, 'node-under-callgrind');
    writeFileSync(wrapper, `#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file="$CALLGRIND_OUT" "${node}" "$@"\n`);
    chmodSync(wrapper, 0o755);
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
    const medians = (taken: InstructionCount[]): InstructionCount => ({
      total: median(taken.map((count) => count.total)),
      loadParse: median(taken.map((count) => count.loadParse)),
      firstRunCompile: median(taken.map((count) => count.firstRunCompile)),
      gc: median(taken.map((count) => count.gc)),
    });
    const [fnCount, floorCount] = [medians(counts.function), medians(counts.floor)];
    return { function: fnCount, floor: floorCount, ratio: rounded(fnCount.total / floorCount.total) };
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
