import { cpus } from 'node:os';
import { stages } from '../../infra/stages';
import { API_FUNCTIONS, ROUTE_FUNCTIONS } from '../../shared/facts/function-names';
import type { BenchOptions } from './bench-settings';
import { capacityAt, COLD_START_RATE, type BillRow } from './bill';
import { dollars, kib, ms } from './format';
import type { InstructionComparison, WindowCounts } from './instructions';
import type { CapacityRow } from './measure-capacity';
import type { ColdStartResults } from './measure-cold-starts';
import type { WarmRequestResults } from './measure-warm-requests';
import type { AnswerClassResults } from './measure-answer-classes';
import { ANSWER_CLASSES, billRowOf } from './answer-classes';
import { SIZING_MARGIN, type MemoryChoice, type SizeEstimate } from './memory-sizing';
import { PRICES } from './prices';
import { ratio, rounded } from './statistics';
import { type BenchVerdicts, MAX_COLD_RATIO, MAX_WARM_RATIO, mark, summarizeVerdicts, type Verdict } from './bench-verdicts';

export interface BenchReport {
  readonly options: BenchOptions;
  readonly nodeVersion: string;
  readonly coldStarts: ColdStartResults;
  readonly warmRequests: WarmRequestResults;
  readonly answers: AnswerClassResults;
  readonly capacity: readonly CapacityRow[];
  readonly memory: readonly MemoryChoice[];
  readonly bill: readonly BillRow[];
  /** Undefined for a quick run: it is not judged. */
  readonly verdicts: BenchVerdicts | undefined;
}

/** Prints the bench's tables to stdout, each with a line saying what it measured, then the verdicts, if judged. */
export function printReport(report: BenchReport): void {
  const { quick } = report.options;
  console.log(`\nAnimal store benchmark${quick ? ' (--quick: a smoke run with too few samples to judge; figures only, no verdict)' : ''}`);
  console.log(`Functions run by Node ${report.nodeVersion} on ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, against dynalite.`);
  console.log(
    'Floors: tools/bench/floors/, the stock SDK client sending what each function sends, built as the functions are ' +
      '(and, for cold starts, two more ways), no source map.\n',
  );
  printColdStarts(report);
  printWarmRequests(report);
  printAnswerClasses(report);
  printCapacity(report);
  printMemory(report);
  printBill(report);
  console.log('');
  for (const line of summarizeVerdicts(report.verdicts?.all).summary) console.log(line);
  if (!quick && !report.options.countInstructions) {
    console.log('Cold starts and warm requests are judged in instructions: run with --instructions.');
  }
}

/** A ratio with its spread, and its mark when the run was judged. */
function ratioCell(verdict: Verdict | undefined, ratio: number, spread: number): string {
  return `${ratio} ±${spread.toFixed(3)}${verdict ? ` ${mark(verdict)}` : ''}`;
}

function printColdStarts({ options, coldStarts, verdicts }: BenchReport): void {
  const { cold, instructions } = coldStarts;
  console.log(
    `Cold start: a fresh process imports the bundle with production's environment and serves one request; median [p25–p75] of ${options.settings.coldRuns}, alternated with the floor; ratio: the median of each run's function/floor pair.`,
  );
  console.table(
    API_FUNCTIONS.map((name) => {
      const c = cold.get(name)!;
      return {
        function: name,
        bundle: `${kib(c.function.size.bytes)} (${kib(c.function.size.gzipBytes)} gz)`,
        floor: `${kib(c.floor.size.bytes)} (${kib(c.floor.size.gzipBytes)} gz)`,
        'first answer ms': `${ms(c.function.firstResponseMs.median)} [${ms(c.function.firstResponseMs.p25)}–${ms(c.function.firstResponseMs.p75)}]`,
        'floor ms': `${ms(c.floor.firstResponseMs.median)} [${ms(c.floor.firstResponseMs.p25)}–${ms(c.floor.firstResponseMs.p75)}]`,
        'time ratio': c.ratio,
        'CPU ms': `${ms(c.function.cpuMs.median, 0)} / ${ms(c.floor.cpuMs.median, 0)}`,
        'RSS MiB': `${ms(c.function.rssMiB.median)} / ${ms(c.floor.rssMiB.median)}`,
      };
    }),
  );
  console.log('');

  if (instructions.size > 0) {
    const millions = (count: number) => (count / 1e6).toFixed(1);
    console.log(
      `Instructions per cold start, counted by callgrind (median of ${options.settings.instructionRuns}, V8's random start-up work left out), ` +
        `against the floor built three ways: as ES modules (judged ≤ ${MAX_COLD_RATIO.esm}×), as NodejsFunction does by default ` +
        `(judged ≤ ${MAX_COLD_RATIO.cdkDefault}×) and alike; ± the spread of the runs. What the function runs over its floor ` +
        'built alike, as a share of that floor:',
    );
    console.table(
      [...instructions].map(([name, c]) => {
        const { alike, esm, cdkDefault } = c.floors;
        const verdict = verdicts?.coldStart.get(name);
        const extra = (part: keyof InstructionComparison['function']) => c.function[part] - alike.floor[part];
        const share = (instructionCount: number) => `${((instructionCount / alike.floor.total) * 100).toFixed(1)} %`;
        return {
          function: name,
          million: millions(c.function.total),
          'floors: ESM · CDK · alike': `${millions(esm.floor.total)} · ${millions(cdkDefault.floor.total)} · ${millions(alike.floor.total)}`,
          'to ESM': ratioCell(verdict?.esm, esm.ratio, esm.spread),
          'to CDK': ratioCell(verdict?.cdkDefault, cdkDefault.ratio, cdkDefault.spread),
          'to alike': ratioCell(undefined, alike.ratio, alike.spread),
          'parsing on load': share(extra('loadParse')),
          'compiling on first run': share(extra('firstRunCompile')),
          GC: share(extra('gc')),
          'the rest': share(extra('total') - extra('loadParse') - extra('firstRunCompile') - extra('gc')),
        };
      }),
    );
    console.log('');
  }
}

function printWarmRequests({ options, warmRequests, verdicts }: BenchReport): void {
  const { settings } = options;
  console.log(
    `Warm: ${settings.warm.rounds} rounds of ${settings.warm.batch} requests interleaved with the floor in one process; ` +
      'CPU µs per request over all of them (one core here taken as one Lambda vCPU: 1,769 MB).',
  );
  console.table(
    ROUTE_FUNCTIONS.map((name) => {
      const { fn, floor } = warmRequests.warm.get(name)!;
      return {
        function: name,
        'CPU µs / floor': `${ms(fn.cpuUsPerRequest, 0)} / ${ms(floor.cpuUsPerRequest, 0)}`,
        'CPU ratio': ratio(fn.cpuUsPerRequest, floor.cpuUsPerRequest),
        'p50 ms / floor': `${ms(fn.p50Ms, 3)} / ${ms(floor.p50Ms, 3)}`,
        'p50 ratio': ratio(fn.p50Ms, floor.p50Ms),
        'p99 ms': ms(fn.p99Ms, 2),
        'log B/req': Math.round(fn.logBytesPerRequest),
      };
    }),
  );

  console.log("Authorizer, warm, at each stage's log level; the floor looks every key up (GetItem).");
  console.table(
    stages.map((stage) => {
      const a = warmRequests.authorizer.get(stage.name)!;
      return {
        stage: `${stage.name} (${stage.logLevel})`,
        'cached p50 ms': ms(a.cached.p50Ms, 3),
        'cached CPU µs': ms(a.cached.cpuUsPerRequest, 0),
        'new key CPU µs / floor': `${ms(a.uncached.cpuUsPerRequest, 0)} / ${ms(a.floor.cpuUsPerRequest, 0)}`,
        'new key p50 ms / floor': `${ms(a.uncached.p50Ms, 3)} / ${ms(a.floor.p50Ms, 3)}`,
        'no key p50 ms': ms(a.missing.p50Ms, 3),
        'log B/req cached·new·none': `${Math.round(a.cached.logBytesPerRequest)} · ${Math.round(a.uncached.logBytesPerRequest)} · ${Math.round(a.missing.logBytesPerRequest)}`,
      };
    }),
  );

  if (warmRequests.instructions.size === 0) return;
  const { rounds, batch, warmup } = settings.instructionWarm;
  console.log(
    `Instructions per warm request, counted by callgrind in ${rounds} windows of ${batch} requests after ${warmup}, all garbage collected ` +
      'before each, V8 without its optimizing tiers and on a fixed collection schedule, each subject in a process of its own (the authorizer ' +
      'with a new key, in production); ' +
      'median [lowest–highest window], ' +
      `judged ≤ ${MAX_WARM_RATIO}× the floor's, refused when the windows disagree by more than the ratio's distance to it.`,
  );
  const thousands = ({ median, windows }: WindowCounts) =>
    `${(median / 1e3).toFixed(0)} [${(Math.min(...windows) / 1e3).toFixed(0)}–${(Math.max(...windows) / 1e3).toFixed(0)}]`;
  console.table(
    [...warmRequests.instructions].map(([name, c]) => ({
      function: name,
      thousand: thousands(c.function),
      floor: thousands(c.floor),
      ratio: ratioCell(undefined, c.ratio, c.spread),
      ...(verdicts ? { [`≤ ${MAX_WARM_RATIO}`]: mark(verdicts.warm.get(name)!) } : {}),
    })),
  );
}

function printAnswerClasses({ options, answers, verdicts }: BenchReport): void {
  const classes = ANSWER_CLASSES;
  console.log(
    '\nAnswer classes besides the successes (tools/bench/answer-classes.ts): each function the request meets, served it warm, ' +
      `${options.settings.warm.rounds} rounds of ${options.settings.warm.batch} after ${options.settings.warm.warmup}.`,
  );
  console.table(
    classes.map((answerClass) => {
      const results = answers.warm.get(answerClass.id) ?? [];
      return {
        answer: billRowOf(answerClass),
        functions: answerClass.steps.map((step) => step.name).join(' + '),
        'p50 ms': results.map((result) => ms(result.p50Ms, 3)).join(' + '),
        'CPU µs': results.map((result) => ms(result.cpuUsPerRequest, 0)).join(' + '),
        'log B/req': results.map((result) => Math.round(result.logBytesPerRequest)).join(' + '),
      };
    }),
  );
  if (answers.instructions.size === 0) return;
  console.log(
    `Their instructions, each function's added up: cold (median of ${options.settings.answerInstructionRuns} runs, a fresh instance of each ` +
      `function serving the request first) against the floor built as ES modules (judged ≤ ${MAX_COLD_RATIO.esm}×) and as NodejsFunction does ` +
      `(≤ ${MAX_COLD_RATIO.cdkDefault}×); warm against the floor built alike (≤ ${MAX_WARM_RATIO}×), as the successes.`,
  );
  const millions = (count: number) => (count / 1e6).toFixed(1);
  console.table(
    [...answers.instructions].map(([id, counted]) => {
      const verdict = verdicts?.answers.get(id);
      const { esm, cdkDefault } = counted.cold.floors;
      return {
        answer: id,
        'cold million': millions(counted.cold.function),
        'floors: ESM · CDK': `${millions(esm.floor)} · ${millions(cdkDefault.floor)}`,
        'to ESM': ratioCell(verdict?.cold.esm, esm.ratio, esm.spread),
        'to CDK': ratioCell(verdict?.cold.cdkDefault, cdkDefault.ratio, cdkDefault.spread),
        'warm thousand / floor': `${(counted.warm.function / 1e3).toFixed(0)} / ${(counted.warm.floor / 1e3).toFixed(0)}`,
        'warm ratio': ratioCell(verdict?.warm, counted.warm.ratio, counted.warm.spread),
      };
    }),
  );
}

function printCapacity({ capacity, verdicts }: BenchReport): void {
  console.log('DynamoDB capacity per request, as DynamoDB reports it (ReturnConsumedCapacity), by table size.');
  console.table(
    capacity.map((row) => ({
      ...row,
      pets: row.pets.toLocaleString('en'),
      readUnits: rounded(row.readUnits),
      writeUnits: rounded(row.writeUnits),
    })),
  );
  if (verdicts?.capacity) console.log(`Capacity independent of the table size: ${verdicts.capacity.pass ? 'yes' : 'NO'}`);
}

function printMemory({ memory, verdicts }: BenchReport): void {
  console.log(
    '\nMemory: estimated cold start / warm p99 in ms at each setting (the time off CPU as measured, the CPU time divided by ' +
      `the vCPU share the memory buys: 1 vCPU at 1,769 MB). ✓ meets the stage's goals with ${SIZING_MARGIN * 100} % to spare, ` +
      '~ meets them inside that margin, ✗ misses one. The configured setting stands while it meets them and no cheaper one has ✓.',
  );
  console.table(
    memory.map(({ stage, name, estimates, cheapest, configured }, index) => {
      const { latencyGoals } = stages.find((s) => s.name === stage)!;
      return {
        stage: `${stage} (≤ ${latencyGoals.coldStartMs} / ${latencyGoals.warmP99Ms} ms)`,
        function: name,
        ...Object.fromEntries(
          estimates.map((e: SizeEstimate) => [
            `${e.memoryMiB} MB`,
            `${ms(e.coldStartMs, 0)} / ${ms(e.warmP99Ms, 0)} ${e.meetsGoalsWithMargin ? '✓' : e.meetsGoals ? '~' : '✗'}`,
          ]),
        ),
        cheapest: cheapest?.memoryMiB ?? 'none',
        configured,
        ...(verdicts ? { verdict: mark(verdicts.memory[index]!) } : {}),
      };
    }),
  );
}

function printBill({ options, capacity, bill }: BenchReport): void {
  const keyLookup = capacityAt(capacity, 'authorizer, key not cached', options.settings.petCounts[0]!).readUnits;
  console.log(
    `\nThe bill per million requests, production (arm64, memory as configured), ${PRICES.region} list prices read ${PRICES.readOn} (tools/bench/prices.ts). ` +
      'The authorizer has the key cached (it looks a key up once per 30 s per instance); a lookup adds ' +
      `${dollars(keyLookup * PRICES.dynamoDbPerMillionReadUnits)} per million. ` +
      `The free tier is left out; cold starts (INIT is billed) are priced beside, at ${COLD_START_RATE * 100} % of each function's invocations.`,
  );
  console.table(bill.map(({ total: _total, ...row }) => row));
}
