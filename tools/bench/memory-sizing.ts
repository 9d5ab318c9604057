import type { LatencyGoals, StageConfig } from '../../infra/stages';
import type { ColdStartResults } from './measure-cold-starts';
import type { WarmRequestResults } from './measure-warm-requests';
import { PRICES } from './prices';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** The memory settings the estimate considers, in MB. */
export const MEMORY_OPTIONS = [128, 256, 512, 1024] as const;

/** Lambda gives a function one full vCPU at 1,769 MB and a share in proportion below (AWS Lambda docs, "Memory and computing power"). */
export const FULL_VCPU_MB = 1769;

/** What a function measured here: the inputs of the estimate. */
export interface MeasuredCost {
  /** Wall time and CPU time of a cold start (process start to first answer), medians. */
  readonly coldStart: { readonly wallMs: number; readonly cpuMs: number };
  /** A warm request: wall time at p50 and p99, CPU per request. */
  readonly warm: { readonly p50Ms: number; readonly p99Ms: number; readonly cpuMs: number };
}

/**
 * How far within a goal a setting must be to be chosen, or to make a costlier configured one wrong: this machine's
 * times move by up to this much between runs, and a choice made on less would flip from run to run.
 */
export const SIZING_MARGIN = 0.1;

export interface SizeEstimate {
  readonly memoryMiB: number;
  readonly coldStartMs: number;
  readonly warmP50Ms: number;
  readonly warmP99Ms: number;
  /** Duration cost of a million warm requests at p50 (billed per started millisecond). */
  readonly durationCostPerMillion: number;
  /** Within both goals. */
  readonly meetsGoals: boolean;
  /** Within both goals by at least SIZING_MARGIN. */
  readonly meetsGoalsWithMargin: boolean;
}

/**
 * A time measured here, on Lambda at `memoryMiB`: the time off CPU stays, the CPU time stretches by the vCPU share
 * the memory buys. Its assumptions: docs/performance.md, "How memory is chosen".
 */
export function timeAt(memoryMiB: number, wallMs: number, cpuMs: number): number {
  const share = Math.min(1, memoryMiB / FULL_VCPU_MB);
  return Math.max(0, wallMs - cpuMs) + cpuMs / share;
}

export function estimateSizes(measured: MeasuredCost, goals: LatencyGoals): SizeEstimate[] {
  return MEMORY_OPTIONS.map((memoryMiB) => {
    const coldStartMs = timeAt(memoryMiB, measured.coldStart.wallMs, measured.coldStart.cpuMs);
    const warmP50Ms = timeAt(memoryMiB, measured.warm.p50Ms, measured.warm.cpuMs);
    const warmP99Ms = timeAt(memoryMiB, measured.warm.p99Ms, measured.warm.cpuMs);
    const durationCostPerMillion = (Math.ceil(warmP50Ms) / 1000) * (memoryMiB / 1024) * PRICES.lambdaArmPerGbSecond * 1e6;
    const within = (share: number) => coldStartMs <= goals.coldStartMs * share && warmP99Ms <= goals.warmP99Ms * share;
    return {
      memoryMiB,
      coldStartMs,
      warmP50Ms,
      warmP99Ms,
      durationCostPerMillion,
      meetsGoals: within(1),
      meetsGoalsWithMargin: within(1 - SIZING_MARGIN),
    };
  });
}

/** Cheaper first: by duration cost, the smaller setting on a tie. */
function byCost(a: SizeEstimate, b: SizeEstimate): number {
  return a.durationCostPerMillion - b.durationCostPerMillion || a.memoryMiB - b.memoryMiB;
}

/** The setting to choose: the cheapest that meets the goals with the margin to spare; undefined when none does. */
export function cheapestMeetingGoals(estimates: readonly SizeEstimate[]): SizeEstimate | undefined {
  return estimates.filter((estimate) => estimate.meetsGoalsWithMargin).sort(byCost)[0];
}

/**
 * Whether the configured setting stands: it meets the goals, and no cheaper setting meets them with the margin to
 * spare. A setting chosen with the margin keeps standing while a run's noise moves its estimate by less than the
 * margin. Requiring the configured one to be the cheapest with the margin flipped on noise (docs/performance.md,
 * "How memory is chosen").
 */
export function configuredStands(estimates: readonly SizeEstimate[], configured: number): boolean {
  const own = estimates.find((estimate) => estimate.memoryMiB === configured);
  if (own === undefined || !own.meetsGoals) return false;
  return !estimates.some((estimate) => estimate.meetsGoalsWithMargin && byCost(estimate, own) < 0);
}

/** One function of one stage: each setting's estimate, the one to choose, the one configured and whether it stands. */
export interface MemoryChoice {
  readonly stage: string;
  readonly name: ApiFunctionName;
  readonly estimates: SizeEstimate[];
  /** The cheapest setting meeting the stage's goals with the margin to spare (cheapestMeetingGoals). */
  readonly cheapest: SizeEstimate | undefined;
  readonly configured: number;
  /** configuredStands: the bench's memory verdict. */
  readonly stands: boolean;
}

/** The authorizer's warm request at the stage's log level, with a key it has not cached: the request a goal must hold for. */
export function measuredCostOf(
  { cold }: Pick<ColdStartResults, 'cold'>,
  { warm, authorizer }: WarmRequestResults,
  name: ApiFunctionName,
  stage: StageConfig,
): MeasuredCost {
  const c = cold.get(name)!;
  const w = name === 'authorizer' ? authorizer.get(stage.name)!.uncached : warm.get(name)!.fn;
  return {
    coldStart: { wallMs: c.function.firstResponseMs.median, cpuMs: c.function.cpuMs.median },
    warm: { p50Ms: w.p50Ms, p99Ms: w.p99Ms, cpuMs: w.cpuUsPerRequest / 1000 },
  };
}

/** Every function of every stage, against that stage's latency goals. */
export function chooseMemory(
  stages: readonly StageConfig[],
  functions: readonly ApiFunctionName[],
  measured: (name: ApiFunctionName, stage: StageConfig) => MeasuredCost,
): MemoryChoice[] {
  return stages.flatMap((stage) =>
    functions.map((name) => {
      const estimates = estimateSizes(measured(name, stage), stage.latencyGoals);
      const configured = stage.memoryMiB[name];
      return {
        stage: stage.name,
        name,
        estimates,
        cheapest: cheapestMeetingGoals(estimates),
        configured,
        stands: configuredStands(estimates, configured),
      };
    }),
  );
}
