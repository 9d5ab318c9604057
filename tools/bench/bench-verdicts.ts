import { ANSWER_CLASSES, billRowOf } from './answer-classes';
import type { BillRow } from './bill';
import type { FloorBuild } from './floors';
import type { MemoryChoice } from './memory-sizing';
import { type JudgedRatio, rounded } from './statistics';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { OPERATION_IDS } from '../../shared/facts/routes';
import { OPERATIONS } from '../../shared/operations/operations';

const CLASSES = ANSWER_CLASSES;

/**
 * The most log bytes a request of each bill row may cost (tools/bench/bill.ts): its functions' lines and the access
 * log's. An operation's is its file's (shared/operations/), an answer class's its entry's (tools/bench/answer-classes.ts).
 */
export const MAX_LOG_BYTES: Readonly<Record<string, number>> = {
  ...Object.fromEntries(OPERATION_IDS.map((operationId) => [operationId, OPERATIONS[operationId].bench.maxLogBytes])),
  ...Object.fromEntries(CLASSES.map((answerClass) => [billRowOf(answerClass), answerClass.maxLogBytes])),
};

/**
 * The most each operation's request and each answer class may cost as a ratio to its floor (HTTP API, two invocations
 * and the request's DynamoDB units): one limit for every answer a client can get, refusals and outages as successes.
 */
export const MAX_TO_FLOOR: Readonly<Record<string, number>> = Object.fromEntries(
  [...OPERATION_IDS, ...CLASSES.map(billRowOf)].map((row) => [row, 1.35]),
);

/**
 * The cold-start goals: the most a function's cold start may run, in instructions, as a ratio to two builds of its
 * floor (tools/bench/floors.ts): the ES-module build the functions left, and CDK's default build. Against its floor
 * built alike, the ratio is what our code costs over the design's calls, reported, not judged (docs/performance.md).
 */
export const MAX_COLD_RATIO = { esm: 0.92, cdkDefault: 1.05 } as const satisfies Partial<Record<FloorBuild, number>>;

/** The floor builds a cold start is judged against. */
export type ColdReference = keyof typeof MAX_COLD_RATIO;

/** How each reference is named in a verdict. */
export const COLD_REFERENCE_NAMES: Readonly<Record<ColdReference, string>> = {
  esm: 'its ES-module floor',
  cdkDefault: "NodejsFunction's default build of its floor",
};

/** The warm goal: the most instructions a function may run per warm request, as a ratio to its floor's. */
export const MAX_WARM_RATIO = 1.1;

/** One pass/fail judgement of the bench: a measured value against its limit. */
export interface Verdict {
  readonly what: string;
  readonly value: number;
  readonly limit: number;
  readonly pass: boolean;
  /** How far apart the value's runs or windows read (JudgedRatio), when it was measured more than once. */
  readonly spread?: number;
  /** Neither passed nor failed: its runs or windows disagree by more than the value's distance to the limit. */
  readonly refused?: true;
}

/** A value within its limit passes, unless its runs disagree by more than the margin it passes by: then it is refused. */
export function judge(what: string, value: number, limit: number, spread?: number): Verdict {
  if (spread === undefined) return { what, value, limit, pass: value <= limit };
  if (spread > Math.abs(limit - value)) return { what, value, limit, pass: false, spread, refused: true };
  return { what, value, limit, pass: value <= limit, spread };
}

export function mark(verdict: Verdict): 'pass' | 'FAIL' | 'REFUSED' {
  if (verdict.refused) return 'REFUSED';
  return verdict.pass ? 'pass' : 'FAIL';
}

export interface JudgedMeasurements {
  /** With --instructions only: each function's cold start and warm request against its floor's, in instructions. */
  readonly instructions:
    | {
        readonly cold: ReadonlyMap<ApiFunctionName, { readonly floors: Readonly<Record<ColdReference, JudgedRatio>> }>;
        readonly warm: ReadonlyMap<ApiFunctionName, JudgedRatio>;
        /** Each answer class's functions added up (tools/bench/measure-answer-classes.ts), judged at the same limits. */
        readonly answers: ReadonlyMap<
          string,
          { readonly cold: { readonly floors: Readonly<Record<ColdReference, JudgedRatio>> }; readonly warm: JudgedRatio }
        >;
      }
    | undefined;
  readonly bill: ReadonlyArray<Pick<BillRow, 'operation' | 'log bytes' | 'to floor'>>;
  /** Whether each request consumed the same capacity at every table size; undefined when one size was measured. */
  readonly capacityIndependentOfTableSize: boolean | undefined;
  /** Each function of each stage: the one configured, whether it stands, and the cheapest to choose, if any. */
  readonly memory: ReadonlyArray<
    Pick<MemoryChoice, 'stage' | 'name' | 'configured' | 'stands'> & { readonly cheapest?: { readonly memoryMiB: number } }
  >;
}

export interface BenchVerdicts {
  /** In instructions against each reference build of the floor, with --instructions: empty without. */
  readonly coldStart: ReadonlyMap<ApiFunctionName, Readonly<Record<ColdReference, Verdict>>>;
  /** In instructions per request, with --instructions: each route function's, then the authorizer's with a new key. */
  readonly warm: ReadonlyMap<ApiFunctionName, Verdict>;
  /** Each answer class, cold against each reference build and warm, in instructions, with --instructions: empty without. */
  readonly answers: ReadonlyMap<string, { readonly cold: Readonly<Record<ColdReference, Verdict>>; readonly warm: Verdict }>;
  /** The bill's rows with a budget: log bytes, then the ratio to the floor. */
  readonly bill: readonly Verdict[];
  readonly capacity: Verdict | undefined;
  /** In the order of the measurements' `memory`. */
  readonly memory: readonly Verdict[];
  /** Every verdict above, in that order: the bench fails when one does. */
  readonly all: readonly Verdict[];
}

/**
 * Only functions that issue a command are measured in instructions as successes: routeNotFound's floor only answers.
 * Answer classes are judged at the successes' limits. A verdict measured more than once may be refused (judge).
 */
export function judgeBench(measured: JudgedMeasurements): BenchVerdicts {
  const builds = Object.keys(MAX_COLD_RATIO) as ColdReference[];
  const judgeCold = (subject: string, floors: Readonly<Record<ColdReference, JudgedRatio>>) =>
    Object.fromEntries(
      builds.map((build) => {
        const { ratio, spread } = floors[build];
        return [build, judge(`cold start instructions ${subject} to ${COLD_REFERENCE_NAMES[build]}`, ratio, MAX_COLD_RATIO[build], spread)];
      }),
    ) as Record<ColdReference, Verdict>;
  const judgeWarm = (subject: string, { ratio, spread }: JudgedRatio) =>
    judge(`warm instructions ${subject}`, ratio, MAX_WARM_RATIO, spread);
  const coldStart = new Map([...(measured.instructions?.cold ?? [])].map(([name, { floors }]) => [name, judgeCold(name, floors)]));
  const warm = new Map([...(measured.instructions?.warm ?? [])].map(([name, counted]) => [name, judgeWarm(name, counted)]));
  const answers = new Map(
    [...(measured.instructions?.answers ?? [])].map(([id, { cold, warm: counted }]) => [
      id,
      { cold: judgeCold(`the answer ${id}`, cold.floors), warm: judgeWarm(`the answer ${id}`, counted) },
    ]),
  );
  const budgeted = (budgets: Readonly<Record<string, number>>, what: string, value: (row: JudgedMeasurements['bill'][number]) => number) =>
    measured.bill.flatMap((row) =>
      row.operation in budgets ? [judge(`${what} ${row.operation}`, value(row), budgets[row.operation]!)] : [],
    );
  const bill = [
    ...budgeted(MAX_LOG_BYTES, 'log bytes', (row) => row['log bytes']),
    ...budgeted(MAX_TO_FLOOR, 'cost to floor', (row) => row['to floor']),
  ];
  const independent = measured.capacityIndependentOfTableSize;
  const capacity = independent === undefined ? undefined : judge('capacity independent of table size', independent ? 0 : 1, 0);
  const memory = measured.memory.map(({ stage, name, cheapest, configured, stands }) =>
    judge(`memory ${stage} ${name} (configured ${configured}, cheapest ${cheapest?.memoryMiB ?? 'none'})`, stands ? 0 : 1, 0),
  );
  const all = [
    ...[...coldStart.values()].flatMap((verdicts) => builds.map((build) => verdicts[build])),
    ...warm.values(),
    ...[...answers.values()].flatMap((verdicts) => [...builds.map((build) => verdicts.cold[build]), verdicts.warm]),
    ...bill,
    ...(capacity ? [capacity] : []),
    ...memory,
  ];
  return { coldStart, warm, answers, bill, capacity, memory, all };
}

/** What a run concludes: its verdict, its exit code and the lines that end its report. */
export interface BenchOutcome {
  /** 'none' for a quick run, which is never judged; 'fail' when a verdict failed or was refused. */
  readonly verdict: 'none' | 'pass' | 'fail';
  readonly exitCode: 0 | 1;
  readonly summary: readonly string[];
}

/**
 * A full run's verdicts decide its exit code. A quick run has none (undefined): its few samples cannot support a
 * verdict either way, so it exits 0 having judged nothing, whatever its figures read.
 */
export function summarizeVerdicts(verdicts: readonly Verdict[] | undefined): BenchOutcome {
  if (verdicts === undefined) {
    return {
      verdict: 'none',
      exitCode: 0,
      summary: ['No verdict: a quick run judges nothing. Its samples are too few to pass or fail a goal; run without --quick to judge.'],
    };
  }
  const failed = verdicts.filter((verdict) => !verdict.pass);
  return {
    verdict: failed.length === 0 ? 'pass' : 'fail',
    exitCode: failed.length === 0 ? 0 : 1,
    summary: [
      `Verdicts: ${verdicts.length - failed.length} of ${verdicts.length} pass.`,
      ...failed.map((verdict) =>
        verdict.refused
          ? `  REFUSED ${verdict.what}: ${verdict.value}, its runs ${verdict.spread} apart, ${rounded(Math.abs(verdict.limit - verdict.value))} from ${verdict.limit}`
          : `  FAIL ${verdict.what}: ${verdict.value} > ${verdict.limit}`,
      ),
    ],
  };
}
