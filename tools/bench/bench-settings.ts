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
  /** Sizes of the pets table the capacity is read at; the first is the table every other section uses. */
  readonly petCounts: readonly number[];
  /** Requests per capacity scenario, at each table size. */
  readonly capacityRequests: number;
}

export interface BenchOptions {
  /** A smoke run of the same code paths, with too few samples for the verdicts to mean much. */
  readonly quick: boolean;
  /** Counts cold starts' and warm requests' instructions under valgrind (tools/bench/instructions.ts), which the verdicts need. */
  readonly countInstructions: boolean;
  readonly settings: BenchSettings;
}

const FULL: BenchSettings = {
  coldRuns: 61,
  instructionRuns: 5,
  warm: { rounds: 400, batch: 5, warmup: 300 },
  instructionWarm: { rounds: 3, batch: 200, warmup: 300 },
  petCounts: [1_000, 100_000],
  capacityRequests: 5,
};

const QUICK: BenchSettings = {
  coldRuns: 5,
  instructionRuns: 3,
  warm: { rounds: 16, batch: 5, warmup: 50 },
  instructionWarm: { rounds: 3, batch: 100, warmup: 300 },
  petCounts: [1_000],
  capacityRequests: 3,
};

export function readBenchOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  return { quick, countInstructions: argv.includes('--instructions'), settings: quick ? QUICK : FULL };
}
