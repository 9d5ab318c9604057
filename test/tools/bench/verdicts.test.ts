import { describe, expect, it } from 'vitest';
import type { FunctionName } from '../../../infra/api-functions';
import { judgeBench, MAX_RATIO, type JudgedMeasurements } from '../../../tools/bench/verdicts';

const p50 = (p50Ms: number) => ({ p50Ms });

/** Every function at its floor's time, production's authorizer too, memory as cheap as it can be. */
function measurements(overrides: Partial<JudgedMeasurements> = {}): JudgedMeasurements {
  const names: FunctionName[] = ['listPets', 'createPet', 'routeNotFound', 'authorizer'];
  return {
    coldStarts: new Map(names.map((name) => [name, { ratio: 1 }])),
    warm: new Map(names.filter((name) => name !== 'authorizer').map((name) => [name, { fn: p50(2), floor: p50(2) }])),
    productionAuthorizer: { uncached: p50(2), floor: p50(2) },
    capacityIndependentOfTableSize: undefined,
    memory: [{ stage: 'production', name: 'listPets', cheapest: { memoryMiB: 512 }, configured: 512 }],
    ...overrides,
  };
}

describe("the bench's verdicts", () => {
  it('pass a function within the ratio to its floor and fail one beyond it, cold and warm', () => {
    const verdicts = judgeBench(
      measurements({
        coldStarts: new Map([
          ['listPets', { ratio: MAX_RATIO }],
          ['createPet', { ratio: MAX_RATIO + 0.001 }],
        ]),
        warm: new Map([
          ['listPets', { fn: p50(2.2), floor: p50(2) }],
          ['createPet', { fn: p50(2.1), floor: p50(2) }],
        ]),
      }),
    );
    expect(verdicts.coldStart.get('listPets')?.pass).toBe(true);
    expect(verdicts.coldStart.get('createPet')).toEqual({ what: 'cold start createPet', value: 1.051, limit: MAX_RATIO, pass: false });
    expect(verdicts.warmP50.get('listPets')).toMatchObject({ value: 1.1, pass: false });
    expect(verdicts.warmP50.get('createPet')).toMatchObject({ value: 1.05, pass: true });
  });

  it('leave routeNotFound unjudged: its floor issues no command, so a ratio to it says nothing', () => {
    const verdicts = judgeBench(
      measurements({
        coldStarts: new Map([['routeNotFound', { ratio: 20 }]]),
        warm: new Map([['routeNotFound', { fn: p50(1), floor: p50(0.01) }]]),
      }),
    );
    expect(verdicts.coldStart.has('routeNotFound')).toBe(false);
    expect(verdicts.warmP50.has('routeNotFound')).toBe(false);
    expect(verdicts.all.every((verdict) => verdict.pass)).toBe(true);
  });

  it("judge the production authorizer on a key it has not cached, against its floor's lookup", () => {
    const verdicts = judgeBench(measurements({ productionAuthorizer: { uncached: p50(3), floor: p50(2) } }));
    expect(verdicts.authorizer).toEqual({ what: 'warm p50 authorizer (new key)', value: 1.5, limit: MAX_RATIO, pass: false });
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
      'warm p50 listPets',
      'warm p50 createPet',
      'warm p50 authorizer (new key)',
      'capacity independent of table size',
      'memory production listPets (configured 512, cheapest 512)',
    ]);
  });
});
