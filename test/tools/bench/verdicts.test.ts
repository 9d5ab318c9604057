import { describe, expect, it } from 'vitest';
import type { FunctionName } from '../../../infra/api-functions';
import { addedCpuUs, judgeBench, MAX_ADDED_CPU_US, MAX_RATIO, type JudgedMeasurements } from '../../../tools/bench/bench-verdicts';

/** CPU µs per request of each round's batch. */
const batches = (...cpuUsPerBatch: number[]) => ({ cpuUsPerBatch });
/** A floor whose rounds drift, as a shared machine's do: 500, 520, … µs per request. */
const floor = (rounds = 9) => batches(...Array.from({ length: rounds }, (_, round) => 500 + 20 * round));
/** A function adding `added` µs to each round of that floor. */
const over = (added: number, rounds = 9) => batches(...floor(rounds).cpuUsPerBatch.map((us) => us + added));

/** Every function at its floor's cost, production's authorizer too, memory as cheap as it can be. */
function measurements(overrides: Partial<JudgedMeasurements> = {}): JudgedMeasurements {
  const names: FunctionName[] = ['listPets', 'createPet', 'routeNotFound', 'authorizer'];
  return {
    coldStarts: new Map(names.map((name) => [name, { ratio: 1 }])),
    warm: new Map(names.filter((name) => name !== 'authorizer').map((name) => [name, { fn: over(0), floor: floor() }])),
    productionAuthorizer: { uncached: over(0), floor: floor() },
    capacityIndependentOfTableSize: undefined,
    memory: [{ stage: 'production', name: 'listPets', cheapest: { memoryMiB: 512 }, configured: 512 }],
    ...overrides,
  };
}

describe("the bench's verdicts", () => {
  it('pass a function within the ratio to its floor cold and fail one beyond it', () => {
    const verdicts = judgeBench(
      measurements({
        coldStarts: new Map([
          ['listPets', { ratio: MAX_RATIO }],
          ['createPet', { ratio: MAX_RATIO + 0.001 }],
        ]),
      }),
    );
    expect(verdicts.coldStart.get('listPets')?.pass).toBe(true);
    expect(verdicts.coldStart.get('createPet')).toEqual({ what: 'cold start createPet', value: 1.051, limit: MAX_RATIO, pass: false });
  });

  it('pass a function adding 99 µs of CPU per warm request to its floor and fail one adding 101', () => {
    const verdicts = judgeBench(
      measurements({
        warm: new Map([
          ['listPets', { fn: over(99), floor: floor() }],
          ['createPet', { fn: over(101), floor: floor() }],
        ]),
      }),
    );
    expect(verdicts.warmCpu.get('listPets')).toMatchObject({
      what: 'warm CPU added listPets',
      value: 99,
      limit: MAX_ADDED_CPU_US,
      pass: true,
    });
    expect(verdicts.warmCpu.get('createPet')).toMatchObject({ value: 101, pass: false });
  });

  it('compare each round with the floor of the same round, so a machine slowing down between rounds widens nothing', () => {
    // The floor's own rounds run from 500 to 2,100 µs as the machine's load comes and goes.
    const drifting = batches(500, 2100, 900, 1500, 700, 1900, 1100);
    const fn = batches(...drifting.cpuUsPerBatch.map((us) => us + 40));
    expect(addedCpuUs(fn, drifting)).toEqual({ median: 40, p25: 40, p75: 40, runs: 7 });
  });

  it('report the spread of the rounds, and judge their median, so a few rounds hit by a collection flip nothing', () => {
    const fn = over(60);
    const hit = batches(...fn.cpuUsPerBatch.map((us, round) => (round < 3 ? us + 400 : us)));
    const verdicts = judgeBench(measurements({ warm: new Map([['getPet', { fn: hit, floor: floor() }]]) }));
    expect(verdicts.warmCpu.get('getPet')).toMatchObject({ value: 60, pass: true, spread: { median: 60, p25: 60, p75: 460, runs: 9 } });
  });

  it('pair only the rounds both measured', () => {
    expect(addedCpuUs(over(10, 5), floor(3)).runs).toBe(3);
  });

  it('leave routeNotFound unjudged: its floor issues no command, so a ratio to it says nothing', () => {
    const verdicts = judgeBench(
      measurements({
        coldStarts: new Map([['routeNotFound', { ratio: 20 }]]),
        warm: new Map([['routeNotFound', { fn: over(900), floor: floor() }]]),
      }),
    );
    expect(verdicts.coldStart.has('routeNotFound')).toBe(false);
    expect(verdicts.warmCpu.has('routeNotFound')).toBe(false);
    expect(verdicts.all.every((verdict) => verdict.pass)).toBe(true);
  });

  it("judge the production authorizer on a key it has not cached, against its floor's lookup", () => {
    const verdicts = judgeBench(measurements({ productionAuthorizer: { uncached: over(150), floor: floor() } }));
    expect(verdicts.warmCpu.get('authorizer')).toMatchObject({
      what: 'warm CPU added authorizer (new key)',
      value: 150,
      limit: MAX_ADDED_CPU_US,
      pass: false,
    });
  });

  it('judge capacity only when it was read at more than one table size, and fail it when it grew', () => {
    expect(judgeBench(measurements()).capacity).toBeUndefined();
    expect(judgeBench(measurements({ capacityIndependentOfTableSize: true })).capacity?.pass).toBe(true);
    expect(judgeBench(measurements({ capacityIndependentOfTableSize: false })).capacity?.pass).toBe(false);
  });

  it('fail a memory setting that is not the cheapest meeting the goals, or when no setting meets them', () => {
    const verdicts = judgeBench(
      measurements({
        memory: [
          { stage: 'staging', name: 'listPets', cheapest: { memoryMiB: 256 }, configured: 256 },
          { stage: 'staging', name: 'createPet', cheapest: { memoryMiB: 256 }, configured: 512 },
          { stage: 'production', name: 'listPets', cheapest: undefined, configured: 512 },
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
      'cold start listPets',
      'cold start createPet',
      'cold start authorizer',
      'warm CPU added listPets',
      'warm CPU added createPet',
      'warm CPU added authorizer (new key)',
      'capacity independent of table size',
      'memory production listPets (configured 512, cheapest 512)',
    ]);
  });
});
