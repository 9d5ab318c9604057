import type { FunctionName } from '../../infra/api-functions';
import { issuesCommand } from './bench-functions';
import { ratio } from './statistics';

/** The goal of outcome 2: a function within 5 % of its floor, cold and warm. */
export const MAX_RATIO = 1.05;

/** One pass/fail judgement of the bench: a measured value against its limit. */
export interface Verdict {
  readonly what: string;
  readonly value: number;
  readonly limit: number;
  readonly pass: boolean;
}

export function judge(what: string, value: number, limit: number): Verdict {
  return { what, value, limit, pass: value <= limit };
}

/** How the tables print a verdict. */
export function mark(verdict: Verdict): 'pass' | 'FAIL' {
  return verdict.pass ? 'pass' : 'FAIL';
}

interface P50 {
  readonly p50Ms: number;
}

/** What the verdicts are taken on, as the sections measured it. */
export interface JudgedMeasurements {
  /** Each function's cold starts against its floor's. */
  readonly coldStarts: ReadonlyMap<FunctionName, { readonly ratio: number }>;
  /** Each route function's warm requests, and its floor's. */
  readonly warm: ReadonlyMap<FunctionName, { readonly fn: P50; readonly floor: P50 }>;
  /** The production authorizer with a key it has not cached, and its floor. */
  readonly productionAuthorizer: { readonly uncached: P50; readonly floor: P50 };
  /** Whether each request consumed the same capacity at every table size; undefined when one size was measured. */
  readonly capacityIndependentOfTableSize: boolean | undefined;
  /** Each function of each stage: the cheapest memory that meets the stage's goals, if any, and the one configured. */
  readonly memory: ReadonlyArray<{
    readonly stage: string;
    readonly name: FunctionName;
    readonly cheapest: { readonly memoryMiB: number } | undefined;
    readonly configured: number;
  }>;
}

export interface BenchVerdicts {
  readonly coldStart: ReadonlyMap<FunctionName, Verdict>;
  readonly warmP50: ReadonlyMap<FunctionName, Verdict>;
  readonly authorizer: Verdict;
  readonly capacity: Verdict | undefined;
  /** In the order of the measurements' `memory`. */
  readonly memory: readonly Verdict[];
  /** Every verdict above, in that order: the bench fails when one does. */
  readonly all: readonly Verdict[];
}

/**
 * The bench's verdicts: each function that issues a command within MAX_RATIO of its floor, cold and
 * warm (the authorizer's in production only: staging's DEBUG lines are a cost it chose to pay),
 * capacity that does not grow with the table, and each stage's memory the cheapest that meets its goals.
 */
export function judgeBench(measured: JudgedMeasurements): BenchVerdicts {
  const judged = <T>(results: ReadonlyMap<FunctionName, T>, verdict: (name: FunctionName, result: T) => Verdict) =>
    new Map([...results].filter(([name]) => issuesCommand(name)).map(([name, result]) => [name, verdict(name, result)]));
  const coldStart = judged(measured.coldStarts, (name, { ratio: value }) => judge(`cold start ${name}`, value, MAX_RATIO));
  const warmP50 = judged(measured.warm, (name, { fn, floor }) => judge(`warm p50 ${name}`, ratio(fn.p50Ms, floor.p50Ms), MAX_RATIO));
  const { uncached, floor } = measured.productionAuthorizer;
  const authorizer = judge('warm p50 authorizer (new key)', ratio(uncached.p50Ms, floor.p50Ms), MAX_RATIO);
  const independent = measured.capacityIndependentOfTableSize;
  const capacity = independent === undefined ? undefined : judge('capacity independent of table size', independent ? 0 : 1, 0);
  const memory = measured.memory.map(({ stage, name, cheapest, configured }) =>
    judge(
      `memory ${stage} ${name} (configured ${configured}, cheapest ${cheapest?.memoryMiB ?? 'none'})`,
      cheapest?.memoryMiB === configured ? 0 : 1,
      0,
    ),
  );
  const all = [...coldStart.values(), ...warmP50.values(), authorizer, ...(capacity ? [capacity] : []), ...memory];
  return { coldStart, warmP50, authorizer, capacity, memory, all };
}
