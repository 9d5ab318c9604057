import type { BillRow } from './bill';
import type { MemoryChoice } from './memory-sizing';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** The most log bytes a request of each bill row may cost (tools/bench/bill.ts): its functions' lines and the access log's. */
export const MAX_LOG_BYTES = { listPets: 700, getPet: 700, createPet: 900, 'anonymous (401)': 700 } as const;

/** The most these bill rows may cost, as a ratio to their floor: HTTP API, two invocations and the request's DynamoDB units. */
export const MAX_TO_FLOOR = { listPets: 1.35, getPet: 1.35, 'anonymous (401)': 1.35 } as const;

/** The cold-start goal: the most a function's cold start may run, in instructions, as a ratio to its floor's. */
export const MAX_COLD_RATIO = 1.05;

/** The warm goal: the most instructions a function may run per warm request, as a ratio to its floor's. */
export const MAX_WARM_RATIO = 1.1;

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

export function mark(verdict: Verdict): 'pass' | 'FAIL' {
  return verdict.pass ? 'pass' : 'FAIL';
}

export interface JudgedMeasurements {
  /** With --instructions only: each function's cold start and warm request against its floor's, in instructions. */
  readonly instructions:
    | {
        readonly cold: ReadonlyMap<ApiFunctionName, { readonly ratio: number }>;
        readonly warm: ReadonlyMap<ApiFunctionName, { readonly ratio: number }>;
      }
    | undefined;
  readonly bill: ReadonlyArray<Pick<BillRow, 'operation' | 'log bytes' | 'to floor'>>;
  /** Whether each request consumed the same capacity at every table size; undefined when one size was measured. */
  readonly capacityIndependentOfTableSize: boolean | undefined;
  /** Each function of each stage: the cheapest memory that meets the stage's goals, if any, and the one configured. */
  readonly memory: ReadonlyArray<
    Pick<MemoryChoice, 'stage' | 'name' | 'configured'> & { readonly cheapest?: { readonly memoryMiB: number } }
  >;
}

export interface BenchVerdicts {
  /** In instructions, with --instructions: empty without. */
  readonly coldStart: ReadonlyMap<ApiFunctionName, Verdict>;
  /** In instructions per request, with --instructions: each route function's, then the authorizer's with a new key. */
  readonly warm: ReadonlyMap<ApiFunctionName, Verdict>;
  /** The bill's rows with a budget: log bytes, then the ratio to the floor. */
  readonly bill: readonly Verdict[];
  readonly capacity: Verdict | undefined;
  /** In the order of the measurements' `memory`. */
  readonly memory: readonly Verdict[];
  /** Every verdict above, in that order: the bench fails when one does. */
  readonly all: readonly Verdict[];
}

/** Only functions that issue a command are measured in instructions: routeNotFound's floor only answers. */
export function judgeBench(measured: JudgedMeasurements): BenchVerdicts {
  const judged = (results: ReadonlyMap<ApiFunctionName, { readonly ratio: number }> | undefined, what: string, limit: number) =>
    new Map([...(results ?? [])].map(([name, { ratio }]) => [name, judge(`${what} ${name}`, ratio, limit)]));
  const coldStart = judged(measured.instructions?.cold, 'cold start instructions', MAX_COLD_RATIO);
  const warm = judged(measured.instructions?.warm, 'warm instructions', MAX_WARM_RATIO);
  const budgeted = <T extends Record<string, number>>(
    budgets: T,
    what: string,
    value: (row: JudgedMeasurements['bill'][number]) => number,
  ) =>
    measured.bill.flatMap((row) =>
      row.operation in budgets ? [judge(`${what} ${row.operation}`, value(row), budgets[row.operation]!)] : [],
    );
  const bill = [
    ...budgeted(MAX_LOG_BYTES, 'log bytes', (row) => row['log bytes']),
    ...budgeted(MAX_TO_FLOOR, 'cost to floor', (row) => row['to floor']),
  ];
  const independent = measured.capacityIndependentOfTableSize;
  const capacity = independent === undefined ? undefined : judge('capacity independent of table size', independent ? 0 : 1, 0);
  const memory = measured.memory.map(({ stage, name, cheapest, configured }) =>
    judge(
      `memory ${stage} ${name} (configured ${configured}, cheapest ${cheapest?.memoryMiB ?? 'none'})`,
      cheapest?.memoryMiB === configured ? 0 : 1,
      0,
    ),
  );
  const all = [...coldStart.values(), ...warm.values(), ...bill, ...(capacity ? [capacity] : []), ...memory];
  return { coldStart, warm, bill, capacity, memory, all };
}
