import { parseArgs } from 'node:util';
import type { WarmOptions } from './warm';

/** How many samples each section of `npm run bench` takes. */
export interface BenchSettings {
  /** Cold starts of each function, and as many of its floor. */
  readonly coldRuns: number;
  /** Cold starts counted under callgrind, with --instructions: at least three, for a spread. */
  readonly instructionRuns: number;
  readonly warm: WarmOptions;
  /**
   * Warm requests counted under callgrind, with --instructions: one subject per process, 50 times slower. Each round
   * is a window counted alone, after a full garbage collection: at least three, for a spread.
   */
  readonly instructionWarm: WarmOptions;
  /**
   * Cold starts of each answer class's functions counted under callgrind (tools/bench/answer-classes.ts): three, the
   * fewest that give a spread, as a class is up to two functions and instruction counts are steady (docs/performance.md).
   */
  readonly answerInstructionRuns: number;
  /** Sizes of the pets table the capacity is read at; the first is the table every other section uses. */
  readonly petCounts: readonly number[];
  /** Requests per capacity scenario, at each table size. */
  readonly capacityRequests: number;
}

export interface BenchOptions {
  /** A smoke run of the same code paths: too few samples to judge anything, so it gives no verdict. */
  readonly quick: boolean;
  /** Counts cold starts' and warm requests' instructions under valgrind (tools/bench/instructions.ts), which the verdicts need. */
  readonly countInstructions: boolean;
  /** Writes the committed tools/bench/results.json and renders docs/costs.md from it; otherwise the results go where git ignores them. */
  readonly record: boolean;
  readonly settings: BenchSettings;
}

export const BENCH_USAGE = `Usage: npm run bench [-- --instructions] [--quick | --record]

  --instructions  count instructions under valgrind: the cold-start and warm verdicts need it
  --quick         a smoke run with too few samples to judge: prints the figures, gives no verdict, exits 0
                  (writes results-quick.json in tools/bench/, which git ignores)
  --record        record a full run: writes tools/bench/results.json and renders docs/costs.md from it
                  (without it, a full run writes results-last.json in tools/bench/, which git ignores)

Exits 1 when a full run's verdict fails, 2 on a wrong command line.`;

const FULL: BenchSettings = {
  coldRuns: 61,
  instructionRuns: 5,
  warm: { rounds: 400, batch: 5, warmup: 300 },
  instructionWarm: { rounds: 3, batch: 200, warmup: 300 },
  answerInstructionRuns: 3,
  petCounts: [1_000, 100_000],
  capacityRequests: 5,
};

const QUICK: BenchSettings = {
  coldRuns: 5,
  instructionRuns: 3,
  warm: { rounds: 16, batch: 5, warmup: 50 },
  instructionWarm: { rounds: 3, batch: 100, warmup: 300 },
  answerInstructionRuns: 3,
  petCounts: [1_000],
  capacityRequests: 3,
};

/**
 * The options of `npm run bench`, from its arguments after the script's (process.argv.slice(2)). Throws on an
 * unknown option, and on --record with --quick: the committed results, and the page priced from them, are a full run's.
 */
export function readBenchOptions(args: readonly string[]): BenchOptions & { readonly help: boolean } {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean', default: false },
      instructions: { type: 'boolean', default: false },
      record: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.quick && values.record) throw new Error('--record records a full run: a quick one has too few samples to be priced from.');
  return {
    quick: values.quick,
    countInstructions: values.instructions,
    record: values.record,
    help: values.help,
    settings: values.quick ? QUICK : FULL,
  };
}
