import { describe, expect, it } from 'vitest';
import type { ApiFunctionName } from '../../../shared/facts/function-names';
import {
  judgeBench,
  MAX_COLD_RATIO,
  MAX_LOG_BYTES,
  MAX_TO_FLOOR,
  MAX_WARM_RATIO,
  mark,
  type ColdReference,
  type JudgedMeasurements,
} from '../../../tools/bench/bench-verdicts';
import type { JudgedRatio } from '../../../tools/bench/statistics';
import { ANSWER_CLASSES, billRowOf } from '../../../tools/bench/answer-classes';

const ratios = (entries: Array<[ApiFunctionName, number, spread?: number]>) =>
  new Map(entries.map(([name, ratio, spread = 0]) => [name, { ratio, spread }]));
/** Cold starts at a ratio to each reference build of the floor. */
const coldRatios = (entries: Array<[ApiFunctionName, Record<ColdReference, number>]>) =>
  new Map(
    entries.map(([name, byBuild]) => [
      name,
      {
        floors: Object.fromEntries(Object.entries(byBuild).map(([build, ratio]) => [build, { ratio, spread: 0 }])) as Record<
          ColdReference,
          JudgedRatio
        >,
      },
    ]),
  );
const WITHIN = { esm: 0.9, cdkDefault: 1 };

/** Every judged function at its floor in instructions, every bill row within its budgets, memory as cheap as it can be. */
function measurements(overrides: Partial<JudgedMeasurements> = {}): JudgedMeasurements {
  return {
    instructions: {
      cold: coldRatios([
        ['listPets', WITHIN],
        ['authorizer', WITHIN],
      ]),
      warm: ratios([
        ['listPets', 1],
        ['authorizer', 1],
      ]),
      answers: new Map([
        [
          'anonymous',
          { cold: { floors: { esm: { ratio: 0.9, spread: 0 }, cdkDefault: { ratio: 1, spread: 0 } } }, warm: { ratio: 1, spread: 0 } },
        ],
      ]),
    },
    bill: [
      { operation: 'listPets', 'log bytes': 525, 'to floor': 1.2 },
      { operation: 'createPet, new Idempotency-Key', 'log bytes': 2_000, 'to floor': 3 },
    ],
    capacityIndependentOfTableSize: undefined,
    memory: [{ stage: 'production', name: 'listPets', cheapest: { memoryMiB: 512 }, configured: 512, stands: true }],
    ...overrides,
  };
}

describe("the bench's verdicts", () => {
  it('pass a cold start within its ratio to each reference build of the floor in instructions and fail one beyond it', () => {
    const cold = coldRatios([
      ['listPets', MAX_COLD_RATIO],
      ['createPet', { ...MAX_COLD_RATIO, esm: MAX_COLD_RATIO.esm + 0.001 }],
    ]);
    const verdicts = judgeBench(measurements({ instructions: { cold, warm: new Map(), answers: new Map() } }));
    expect(Object.values(verdicts.coldStart.get('listPets')!).map((verdict) => verdict.pass)).toEqual([true, true]);
    expect(verdicts.coldStart.get('createPet')).toEqual({
      esm: {
        what: 'cold start instructions createPet to its ES-module floor',
        value: 0.921,
        limit: MAX_COLD_RATIO.esm,
        pass: false,
        spread: 0,
      },
      cdkDefault: expect.objectContaining({
        what: "cold start instructions createPet to NodejsFunction's default build of its floor",
        pass: true,
      }),
    });
  });

  it('pass a warm request within its ratio to the floor in instructions and fail one beyond it', () => {
    const warm = ratios([
      ['getPet', MAX_WARM_RATIO],
      ['authorizer', MAX_WARM_RATIO + 0.001],
    ]);
    const verdicts = judgeBench(measurements({ instructions: { cold: new Map(), warm, answers: new Map() } }));
    expect(verdicts.warm.get('getPet')?.pass).toBe(true);
    expect(verdicts.warm.get('authorizer')).toMatchObject({ what: 'warm instructions authorizer', pass: false });
  });

  it('refuse a ratio, within its limit or beyond, whose runs or windows disagree by more than its distance to the limit', () => {
    const warm = ratios([
      ['listPets', 1.05, 0.049],
      ['getPet', 1.05, 0.051],
      ['authorizer', 1.12, 0.03],
    ]);
    const verdicts = judgeBench(measurements({ instructions: { cold: new Map(), warm, answers: new Map() } }));
    expect(verdicts.warm.get('listPets')).toEqual({
      what: 'warm instructions listPets',
      value: 1.05,
      limit: MAX_WARM_RATIO,
      pass: true,
      spread: 0.049,
    });
    expect(verdicts.warm.get('getPet')).toMatchObject({ pass: false, refused: true });
    expect(verdicts.warm.get('authorizer')).toMatchObject({ pass: false, refused: true });
    expect(mark(verdicts.warm.get('getPet')!)).toBe('REFUSED');
  });

  it('judge every answer class at the limits of the successes, cold against each reference build and warm', () => {
    const judged = (esm: number, cdkDefault: number, warm: number) => ({
      cold: { floors: { esm: { ratio: esm, spread: 0 }, cdkDefault: { ratio: cdkDefault, spread: 0 } } },
      warm: { ratio: warm, spread: 0 },
    });
    const answers = new Map(
      ANSWER_CLASSES.map(({ id }, index) =>
        index === 0
          ? [id, judged(MAX_COLD_RATIO.esm + 0.001, MAX_COLD_RATIO.cdkDefault, MAX_WARM_RATIO + 0.001)]
          : [id, judged(MAX_COLD_RATIO.esm, MAX_COLD_RATIO.cdkDefault, MAX_WARM_RATIO)],
      ),
    );
    const verdicts = judgeBench(measurements({ instructions: { cold: new Map(), warm: new Map(), answers } }));
    const [beyond, ...within] = ANSWER_CLASSES.map(({ id }) => verdicts.answers.get(id)!);
    expect([beyond!.cold.esm.pass, beyond!.cold.cdkDefault.pass, beyond!.warm.pass]).toEqual([false, true, false]);
    expect(beyond!.warm.what).toBe(`warm instructions the answer ${ANSWER_CLASSES[0]!.id}`);
    for (const verdict of within)
      expect([verdict.cold.esm.pass, verdict.cold.cdkDefault.pass, verdict.warm.pass]).toEqual([true, true, true]);
    expect(verdicts.all.filter((verdict) => !verdict.pass)).toHaveLength(2);
  });

  it("fail every answer class's bill row beyond its log budget, and beyond the cost budget every answer has", () => {
    const classes = ANSWER_CLASSES;
    const bill = classes.map((answerClass) => ({
      operation: billRowOf(answerClass),
      'log bytes': answerClass.maxLogBytes + 1,
      'to floor': MAX_TO_FLOOR[billRowOf(answerClass)]! + 0.01,
    }));
    const verdicts = judgeBench(measurements({ bill }));
    expect(verdicts.bill.filter((verdict) => verdict.pass)).toEqual([]);
    expect(verdicts.bill.map(({ what }) => what)).toEqual([
      ...classes.map((answerClass) => `log bytes ${billRowOf(answerClass)}`),
      ...classes.map((answerClass) => `cost to floor ${billRowOf(answerClass)}`),
    ]);
  });

  it('take no cold or warm verdict without instruction counts: time on a shared machine cannot settle one', () => {
    const verdicts = judgeBench(measurements({ instructions: undefined }));
    expect([verdicts.coldStart.size, verdicts.warm.size, verdicts.answers.size]).toEqual([0, 0, 0]);
    expect(verdicts.all.length).toBeGreaterThan(0);
  });

  it("judge each budgeted bill row's log bytes and its ratio to the floor, and only those rows", () => {
    const verdicts = judgeBench(
      measurements({
        bill: [
          { operation: 'listPets', 'log bytes': MAX_LOG_BYTES.listPets!, 'to floor': MAX_TO_FLOOR.listPets! },
          {
            operation: 'anonymous (401)',
            'log bytes': MAX_LOG_BYTES['anonymous (401)']! + 1,
            'to floor': MAX_TO_FLOOR['anonymous (401)']! + 0.01,
          },
          { operation: 'createPet, new Idempotency-Key', 'log bytes': 5_000, 'to floor': 9 },
        ],
      }),
    );
    expect(verdicts.bill.map(({ what, pass }) => [what, pass])).toEqual([
      ['log bytes listPets', true],
      ['log bytes anonymous (401)', false],
      ['cost to floor listPets', true],
      ['cost to floor anonymous (401)', false],
    ]);
  });

  it('judge capacity only when it was read at more than one table size, and fail it when it grew', () => {
    expect(judgeBench(measurements()).capacity).toBeUndefined();
    expect(judgeBench(measurements({ capacityIndependentOfTableSize: true })).capacity?.pass).toBe(true);
    expect(judgeBench(measurements({ capacityIndependentOfTableSize: false })).capacity?.pass).toBe(false);
  });

  it('fail a memory setting that does not stand, naming the one to choose, or none', () => {
    const verdicts = judgeBench(
      measurements({
        memory: [
          { stage: 'staging', name: 'listPets', cheapest: { memoryMiB: 256 }, configured: 256, stands: true },
          { stage: 'staging', name: 'createPet', cheapest: { memoryMiB: 256 }, configured: 512, stands: false },
          { stage: 'production', name: 'listPets', cheapest: undefined, configured: 512, stands: false },
        ],
      }),
    );
    expect(verdicts.memory.map((verdict) => verdict.pass)).toEqual([true, false, false]);
    expect(verdicts.memory[1]!.what).toBe('memory staging createPet (configured 512, cheapest 256)');
    expect(verdicts.memory[2]!.what).toBe('memory production listPets (configured 512, cheapest none)');
  });

  it('list every verdict once, cold starts first and memory last, the order the report prints its failures in', () => {
    const verdicts = judgeBench(measurements({ capacityIndependentOfTableSize: true }));
    expect(verdicts.all.map((verdict) => verdict.what)).toEqual([
      'cold start instructions listPets to its ES-module floor',
      "cold start instructions listPets to NodejsFunction's default build of its floor",
      'cold start instructions authorizer to its ES-module floor',
      "cold start instructions authorizer to NodejsFunction's default build of its floor",
      'warm instructions listPets',
      'warm instructions authorizer',
      'cold start instructions the answer anonymous to its ES-module floor',
      "cold start instructions the answer anonymous to NodejsFunction's default build of its floor",
      'warm instructions the answer anonymous',
      'log bytes listPets',
      'cost to floor listPets',
      'capacity independent of table size',
      'memory production listPets (configured 512, cheapest 512)',
    ]);
  });
});
