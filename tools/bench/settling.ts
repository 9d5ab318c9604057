/** One measurement of a series: a quantity (bytes, say) against time, or against the items stored. */
export interface Point {
  readonly x: number;
  readonly y: number;
}

/** The least-squares slope of y over x; NaN with fewer than two distinct x. */
export function slope(points: readonly Point[]): number {
  const n = points.length;
  const meanX = points.reduce((sum, { x }) => sum + x, 0) / n;
  const meanY = points.reduce((sum, { y }) => sum + y, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const { x, y } of points) {
    covariance += (x - meanX) * (y - meanY);
    variance += (x - meanX) ** 2;
  }
  return variance === 0 ? Number.NaN : covariance / variance;
}

/** How much a series may still grow over its last half and be called settled: the larger of a share of its level and some bytes. */
export interface SettlingTolerance {
  readonly fraction: number;
  readonly bytes: number;
}

export interface Settling {
  /** The trend over the last half, in y per x (bytes per second for a time series). */
  readonly slope: number;
  /** What the trend adds over the last half: slope × its length. */
  readonly growth: number;
  readonly allowed: number;
  readonly settled: boolean;
}

/** The fewest points in the last half that make a trend worth judging. */
export const MIN_POINTS = 4;

/**
 * Whether a series has settled: the least-squares trend over its second half (by x), the part left
 * after start-up and the heap sizing itself to the load, adds no more than the tolerance. A trend
 * rather than end minus start, so that one garbage collection falling just before or after the last
 * sample does not decide the verdict.
 */
export function judgeSettling(series: readonly Point[], tolerance: SettlingTolerance): Settling {
  const first = series[0]?.x ?? 0;
  const last = series.at(-1)?.x ?? 0;
  const middle = (first + last) / 2;
  const lastHalf = series.filter(({ x }) => x >= middle);
  if (lastHalf.length < MIN_POINTS)
    throw new Error(`Judging a trend takes at least ${MIN_POINTS} points in the last half, got ${lastHalf.length}.`);
  const trend = slope(lastHalf);
  const growth = trend * (last - lastHalf[0]!.x);
  const level = lastHalf.reduce((sum, { y }) => sum + y, 0) / lastHalf.length;
  const allowed = Math.max(level * tolerance.fraction, tolerance.bytes);
  return { slope: trend, growth, allowed, settled: growth <= allowed };
}
