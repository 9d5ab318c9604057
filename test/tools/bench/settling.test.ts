import { describe, expect, it } from 'vitest';
import { judgeSettling, MIN_POINTS, type Point, slope } from '../../../tools/bench/settling';

const MiB = 2 ** 20;
const tolerance = { fraction: 0.05, bytes: 16 * MiB };

/** One point a second for `seconds`, y given by `bytesAt`. */
function series(seconds: number, bytesAt: (second: number) => number): Point[] {
  return Array.from({ length: seconds + 1 }, (_, second) => ({ x: second, y: bytesAt(second) }));
}

describe('the least-squares slope', () => {
  it('is the rate of a straight line and ignores noise that averages out', () => {
    expect(slope(series(10, (second) => 3 * second + 7))).toBeCloseTo(3);
    expect(slope(series(10, (second) => 100 + (second % 2 === 0 ? 5 : -5)))).toBeCloseTo(0, 0);
  });

  it('is undefined (NaN) when every point has the same x', () => {
    expect(
      slope([
        { x: 1, y: 2 },
        { x: 1, y: 5 },
      ]),
    ).toBeNaN();
  });
});

describe('whether memory has settled', () => {
  it('calls a series settled when it climbs while the heap sizes itself and is flat over its last half', () => {
    const settling = judgeSettling(
      series(60, (second) => Math.min(second, 20) * 10 * MiB + 100 * MiB),
      tolerance,
    );
    expect(settling.settled).toBe(true);
    expect(settling.slope).toBeCloseTo(0);
  });

  it('calls a series still growing when its last half climbs by more than the tolerance, whatever it did before', () => {
    const settling = judgeSettling(
      series(60, (second) => 300 * MiB + second * MiB),
      tolerance,
    );
    expect(settling.settled).toBe(false);
    expect(settling.growth).toBeCloseTo(30 * MiB);
    expect(settling.allowed).toBeCloseTo(0.05 * 345 * MiB);
  });

  it('allows the larger of the share of the level and the bytes: a small process may wobble by the bytes', () => {
    const wobble = judgeSettling(
      series(60, (second) => 50 * MiB + (second > 30 ? 12 * MiB * ((second - 30) / 30) : 0)),
      tolerance,
    );
    expect(wobble.allowed).toBe(16 * MiB);
    expect(wobble.settled).toBe(true);
  });

  it('is not fooled by one collection falling just before the last point', () => {
    const settling = judgeSettling(
      series(60, (second) => (second === 60 ? 380 : 400) * MiB),
      tolerance,
    );
    expect(settling.settled).toBe(true);
    expect(Math.abs(settling.growth)).toBeLessThan(tolerance.bytes);
  });

  it(`refuses to judge a last half of fewer than ${MIN_POINTS} points`, () => {
    expect(() =>
      judgeSettling(
        series(4, () => MiB),
        tolerance,
      ),
    ).toThrow(/at least/);
  });
});
