import { CLOSED_PORT } from '../../local/addresses';
import { ANSWER_CLASSES, type AnswerClass, type AnswerClassId, type AnswerStep, stepLabel } from './answer-classes';
import { expectOutcome, inTurn } from './bench-events';
import type { BenchSetup } from './bench-setup';
import type { BenchSettings } from './bench-settings';
import type { ColdSubject } from './cold-start';
import type { FloorBuild } from './floors';
import type { ColdReference } from './bench-verdicts';
import { progress } from './format';
import { compareInstructions, compareWarmInstructions, type InstructionComparison, type WarmInstructionComparison } from './instructions';
import { expectOnly } from './measure-warm-requests';
import { judgedRatio, median, type JudgedRatio } from './statistics';
import { measureWarm, type WarmOptions, type WarmResult, type WarmSubject } from './warm';

// Each answer class (tools/bench/answer-classes.ts) measured as the successes are: every function it meets against
// its floor, served the class's request, and the class's figures those of its functions added up.

/**
 * A class's instructions: a request meeting each of its functions cold, and warm; its functions' added up. Cold, its
 * floors are the builds a cold start is judged against: built alike too, they would add callgrind runs nothing judges.
 */
export interface AnswerInstructions {
  readonly cold: {
    readonly function: number;
    readonly floors: Readonly<Record<ColdReference, { readonly floor: number } & JudgedRatio>>;
  };
  readonly warm: { readonly function: number; readonly floor: number } & JudgedRatio;
  /** Each function's own, in the class's order. */
  readonly steps: ReadonlyArray<{
    readonly label: string;
    readonly cold: InstructionComparison<ColdReference>;
    readonly warm: WarmInstructionComparison;
  }>;
}

export interface AnswerClassResults {
  /** Each class's functions served its request warm, natively, in the class's order: what the bill prices. */
  readonly warm: ReadonlyMap<AnswerClassId, readonly WarmResult[]>;
  /** With --instructions only. */
  readonly instructions: ReadonlyMap<AnswerClassId, AnswerInstructions>;
}

/** A step's function, or its floor, with production's environment; against a closed port when the class's store is unreachable. */
function stepSide(bench: BenchSetup, step: AnswerStep, unreachable: string | undefined, build?: FloorBuild) {
  const asset = bench.productionAssets.get(step.name)!;
  const local = unreachable === undefined ? bench.local : { ...bench.local, dynamoDbEndpoint: unreachable };
  return { taskRoot: build === undefined ? asset.taskRoot : bench.floorOf(step.name, build), env: asset.environment(local) };
}

/** A step's events at iterations no other request had: a new key at each is a key the authorizer never cached. */
const eventsOf = (bench: BenchSetup, step: AnswerStep, count: number) => inTurn(bench.indices(count).map((index) => step.event(index)));

export async function measureAnswerClasses(
  bench: BenchSetup,
  settings: BenchSettings,
  countInstructions: boolean,
): Promise<AnswerClassResults> {
  const unreachable = `http://127.0.0.1:${CLOSED_PORT}`;
  const storeOf = (answerClass: AnswerClass) => (answerClass.store === 'unreachable' ? unreachable : undefined);
  const sent = ({ warmup, rounds, batch }: WarmOptions) => warmup + rounds * batch;

  // Against an unreachable store, the first requests wait out the client's backoff until the SDK's retry quota is
  // spent; the warm-up spends it, so a warm request is one attempt, as in a lasting outage.
  const warm = new Map<AnswerClassId, WarmResult[]>();
  for (const answerClass of ANSWER_CLASSES) {
    progress(`warm: the answer class ${answerClass.id} (${answerClass.status})`);
    const options = settings.warm;
    const results: WarmResult[] = [];
    for (const step of answerClass.steps) {
      const label = stepLabel(answerClass, step);
      const subject: WarmSubject = { label, ...stepSide(bench, step, storeOf(answerClass)), events: eventsOf(bench, step, sent(options)) };
      const [result] = await measureWarm(bench.node, [subject], options);
      expectOnly(result!, step.outcome);
      results.push(result!);
    }
    warm.set(answerClass.id, results);
  }

  const instructions = new Map<AnswerClassId, AnswerInstructions>();
  for (const answerClass of countInstructions ? ANSWER_CLASSES : []) {
    const runs = settings.answerInstructionRuns;
    progress(`instructions: the answer class ${answerClass.id} (${answerClass.status}), cold (${runs} runs) and warm, under callgrind`);
    const store = storeOf(answerClass);
    const steps: Array<AnswerInstructions['steps'][number]> = [];
    for (const step of answerClass.steps) {
      const label = stepLabel(answerClass, step);
      const coldSubject = (build?: FloorBuild): ColdSubject => ({
        ...stepSide(bench, step, store, build),
        events: eventsOf(bench, step, runs),
        expect: expectOutcome(label, step.outcome),
      });
      const cold = await compareInstructions(
        bench.node,
        coldSubject(),
        { esm: coldSubject('esm'), cdkDefault: coldSubject('cdkDefault') },
        runs,
      );
      const options = settings.instructionWarm;
      const warmSubject = (build?: FloorBuild): WarmSubject => ({
        label: build === undefined ? label : `${label} floor`,
        ...stepSide(bench, step, store, build),
        events: eventsOf(bench, step, sent(options)),
      });
      const { answered, ...counted } = await compareWarmInstructions(bench.node, warmSubject(), warmSubject('alike'), options);
      expectOnly(answered, step.outcome);
      steps.push({ label, cold, warm: counted });
    }
    instructions.set(answerClass.id, addedUp(steps));
  }
  return { warm, instructions };
}

/** A class's figures from its functions': each run's (or window's) counts added up across them, then judged as one. */
export function addedUp(steps: AnswerInstructions['steps']): AnswerInstructions {
  const sum = (lists: ReadonlyArray<readonly number[]>) =>
    lists[0]!.map((_, index) => lists.reduce((total, list) => total + list[index]!, 0));
  const coldRuns = (side: 'function' | ColdReference) => sum(steps.map((step) => step.cold.runTotals[side]));
  const against = (build: ColdReference) => ({ floor: median(coldRuns(build)), ...judgedRatio(coldRuns('function'), coldRuns(build)) });
  const windows = (side: 'function' | 'floor') => sum(steps.map((step) => step.warm[side].windows));
  return {
    cold: {
      function: median(coldRuns('function')),
      floors: { esm: against('esm'), cdkDefault: against('cdkDefault') },
    },
    warm: { function: median(windows('function')), floor: median(windows('floor')), ...judgedRatio(windows('function'), windows('floor')) },
    steps,
  };
}
