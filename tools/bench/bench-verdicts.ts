import type { FunctionName } from '../../infra/api-functions';
import { issuesCommand } from './bench-functions';
import { type Spread, spread } from './statistics';

/** The cold-start goal: the most a function's cold start may take, as a ratio to its floor's. */
export const MAX_RATIO = 1.05;

/** The warm goal, CPU µs per request over the floor's on a core (docs/performance.md, "The warm verdict: CPU added per request"). */
export const MAX_ADDED_CPU_US = 100;

/** One pass/fail judgement of the bench: a measured value against its limit. */
export interface Verdict {
  readonly what: string;
  readonly value: number;
  readonly limit: number;
  readonly pass: boolean;
  /** How much a repeated measurement moved (its median is the value), where there is one. */
  readonly spread?: Spread;
}

export function judge(what: string, value: number, limit: number): Verdict {
  return { what, value, limit, pass: value <= limit };
}

/** CPU per request, batch by batch, as the warm runner measured it. */
interface CpuBatches {
  readonly cpuUsPerBatch: readonly number[];
}

/** Of the rounds' differences: pairing cancels the machine's drift, and the median ignores rounds a collection fell into. */
export function addedCpuUs(fn: CpuBatches, floor: CpuBatches): Spread {
  const rounds = Math.min(fn.cpuUsPerBatch.length, floor.cpuUsPerBatch.length);
  const differences = Array.from({ length: rounds }, (_, round) => fn.cpuUsPerBatch[round]! - floor.cpuUsPerBatch[round]!);
  const tenth = (value: number) => Math.round(value * 10) / 10;
  const { median, p25, p75, runs } = spread(differences);
  return { median: tenth(median), p25: tenth(p25), p75: tenth(p75), runs };
}

function judgeAddedCpu(what: string, fn: CpuBatches, floor: CpuBatches): Verdict {
  const added = addedCpuUs(fn, floor);
  return { ...judge(what, added.median, MAX_ADDED_CPU_US), spread: added };
}

export function mark(verdict: Verdict): 'pass' | 'FAIL' {
  return verdict.pass ? 'pass' : 'FAIL';
}

export interface JudgedMeasurements {
  readonly coldStarts: ReadonlyMap<FunctionName, { readonly ratio: number }>;
  readonly warm: ReadonlyMap<FunctionName, { readonly fn: CpuBatches; readonly floor: CpuBatches }>;
  /** The production authorizer with a key it has not cached, and its floor, interleaved likewise. */
  readonly productionAuthorizer: { readonly uncached: CpuBatches; readonly floor: CpuBatches };
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
  /** CPU added per warm request over the floor: each route function's, then the authorizer's with a new key. */
  readonly warmCpu: ReadonlyMap<FunctionName, Verdict>;
  readonly capacity: Verdict | undefined;
  /** In the order of the measurements' `memory`. */
  readonly memory: readonly Verdict[];
  /** Every verdict above, in that order: the bench fails when one does. */
  readonly all: readonly Verdict[];
}

/** The authorizer's warm CPU is judged in production only: staging's DEBUG lines are a cost it chose to pay. */
export function judgeBench(measured: JudgedMeasurements): BenchVerdicts {
  const judged = <T>(results: ReadonlyMap<FunctionName, T>, verdict: (name: FunctionName, result: T) => Verdict) =>
    new Map([...results].filter(([name]) => issuesCommand(name)).map(([name, result]) => [name, verdict(name, result)]));
  const coldStart = judged(measured.coldStarts, (name, { ratio: value }) => judge(`cold start ${name}`, value, MAX_RATIO));
  const warmCpu = judged(measured.warm, (name, { fn, floor }) => judgeAddedCpu(`warm CPU added ${name}`, fn, floor));
  const { uncached, floor } = measured.productionAuthorizer;
  warmCpu.set('authorizer', judgeAddedCpu('warm CPU added authorizer (new key)', uncached, floor));
  const independent = measured.capacityIndependentOfTableSize;
  const capacity = independent === undefined ? undefined : judge('capacity independent of table size', independent ? 0 : 1, 0);
  const memory = measured.memory.map(({ stage, name, cheapest, configured }) =>
    judge(
      `memory ${stage} ${name} (configured ${configured}, cheapest ${cheapest?.memoryMiB ?? 'none'})`,
      cheapest?.memoryMiB === configured ? 0 : 1,
      0,
    ),
  );
  const all = [...coldStart.values(), ...warmCpu.values(), ...(capacity ? [capacity] : []), ...memory];
  return { coldStart, warmCpu, capacity, memory, all };
}
