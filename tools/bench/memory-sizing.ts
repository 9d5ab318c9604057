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

/** How far within a goal to meet it: this machine's times move, and a setting meeting it by less would flip from run to run. */
export const SIZING_MARGIN = 0.1;

export interface SizeEstimate {
  readonly memoryMiB: number;
  readonly coldStartMs: number;
  readonly warmP50Ms: number;
  readonly warmP99Ms: number;
  /** Duration cost of a million warm requests at p50 (billed per started millisecond). */
  readonly durationCostPerMillion: number;
  /** Within both goals by at least SIZING_MARGIN. */
  readonly meetsGoals: boolean;
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
    const meetsGoals = coldStartMs <= goals.coldStartMs * (1 - SIZING_MARGIN) && warmP99Ms <= goals.warmP99Ms * (1 - SIZING_MARGIN);
    return { memoryMiB, coldStartMs, warmP50Ms, warmP99Ms, durationCostPerMillion, meetsGoals };
  });
}

/** The cheapest setting that meets the goals (the smaller one on a tie); undefined when none does. */
export function cheapestMeetingGoals(estimates: readonly SizeEstimate[]): SizeEstimate | undefined {
  return estimates
    .filter((estimate) => estimate.meetsGoals)
    .sort((a, b) => a.durationCostPerMillion - b.durationCostPerMillion || a.memoryMiB - b.memoryMiB)[0];
}

/** One function of one stage: each setting's estimate, the cheapest that meets the stage's goals, and the one configured. */
export interface MemoryChoice {
  readonly stage: string;
  readonly name: ApiFunctionName;
  readonly estimates: SizeEstimate[];
  readonly cheapest: SizeEstimate | undefined;
  readonly configured: number;
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
      return { stage: stage.name, name, estimates, cheapest: cheapestMeetingGoals(estimates), configured: stage.memoryMiB[name] };
    }),
  );
}
