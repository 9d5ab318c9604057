import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_FUNCTIONS } from '../../../shared/facts/function-names';
import { findRoute, isOperationId, pathParameterNames } from '../../../shared/facts/routes';
import { benchEvents, inTurn, iterationPetId, namesPet } from '../../../tools/bench/bench-events';
import { compareColdStarts, type ColdSubject } from '../../../tools/bench/cold-start';
import { measureWarm } from '../../../tools/bench/warm';

const work = mkdtempSync(join(tmpdir(), 'animal-store-bench-events-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A function that answers, as its status, which request of its instance it serves and the `n` of the event it was handed. */
const taskRoot = join(work, 'echo');
mkdirSync(taskRoot);
writeFileSync(
  join(taskRoot, 'index.mjs'),
  "let served = 0;\nexport const handler = async (event) => ({ statusCode: served++ + ' got ' + event.n });\n",
);

/** What a function whose entry asks for a new event per iteration is handed: the i-th request's own. */
const perIteration = (count: number) => inTurn(Array.from({ length: count }, (_, index) => ({ n: index })));

describe("the bench's requests", () => {
  it('name a pet of their own at every iteration for an operation whose route has a path parameter', () => {
    const named = API_FUNCTIONS.filter((name) => isOperationId(name) && pathParameterNames(findRoute(name).path).length > 0);
    expect(named).not.toEqual([]);
    for (const name of named) {
      const events = benchEvents(name, { apiKey: 'key' }, [0, 1, 2, 3]) as Array<{ pathParameters: Record<string, string> }>;
      const pets = events.map((event) => Object.values(event.pathParameters));
      expect(pets, name).toEqual([0, 1, 2, 3].map((index) => [String(iterationPetId(index))]));
      expect(new Set(pets.flat()).size, name).toBe(4);
    }
  });

  it('are one event, repeated at every iteration, for every other function behind the API', () => {
    for (const name of API_FUNCTIONS.filter((candidate) => !namesPet(candidate))) {
      expect(benchEvents(name, { apiKey: 'key' }, [0, 1, 2, 3]), name).toHaveLength(1);
    }
  });

  it('are one event per iteration, in order, for a function whose event changes with the iteration', () => {
    expect(perIteration(3)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });
});

describe('the warm runner', () => {
  it('hands the i-th request the i-th event, warm-up included', async () => {
    const [result] = await measureWarm(process.execPath, [{ label: 'echo', taskRoot, env: {}, events: perIteration(6) }], {
      warmup: 2,
      rounds: 2,
      batch: 2,
    });
    // The warm-up requests are not recorded.
    expect(result!.statuses).toEqual({ '2 got 2': 1, '3 got 3': 1, '4 got 4': 1, '5 got 5': 1 });
  });

  it('repeats an event that is the same at every iteration', async () => {
    const [result] = await measureWarm(process.execPath, [{ label: 'echo', taskRoot, env: {}, events: [{ n: 7 }] }], {
      warmup: 1,
      rounds: 1,
      batch: 2,
    });
    expect(result!.statuses).toEqual({ '1 got 7': 1, '2 got 7': 1 });
  });
});

describe('the cold starts', () => {
  it("start each run with that run's event, the function's and its floor's their own", async () => {
    const answered = { fn: [] as unknown[], floor: [] as unknown[] };
    const subject = (side: keyof typeof answered, events: readonly unknown[]): ColdSubject => ({
      taskRoot,
      env: {},
      events,
      expect: (result: { statusCode: string }) => answered[side].push(result.statusCode),
    });
    await compareColdStarts(process.execPath, subject('fn', perIteration(3)), subject('floor', [{ n: 9 }]), 3);
    expect(answered).toEqual({ fn: ['0 got 0', '0 got 1', '0 got 2'], floor: ['0 got 9', '0 got 9', '0 got 9'] });
  });
});
