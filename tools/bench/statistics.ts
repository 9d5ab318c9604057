/** The q-quantile (0 ≤ q ≤ 1) of some numbers, interpolated between the two nearest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Median and interquartile range: what the tables print for a repeated measurement. */
export interface Spread {
  readonly median: number;
  readonly p25: number;
  readonly p75: number;
  readonly runs: number;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), p25: quantile(values, 0.25), p75: quantile(values, 0.75), runs: values.length };
}

/** To three decimals: the precision the verdicts are printed and judged at. */
export function rounded(value: number): number {
  return Number(value.toFixed(3));
}

export function ratio(value: number, floor: number): number {
  return rounded(value / floor);
}

/** A ratio of a function's median to its floor's, and how far apart the runs (or windows) of the two sides let it read. */
export interface JudgedRatio {
  readonly ratio: number;
  /** The widest ratio one run of each side gives less the narrowest: max(function) / min(floor) − min(function) / max(floor). */
  readonly spread: number;
}

export function judgedRatio(fn: readonly number[], floor: readonly number[]): JudgedRatio {
  const spread = Math.max(...fn) / Math.min(...floor) - Math.min(...fn) / Math.max(...floor);
  return { ratio: ratio(median(fn), median(floor)), spread: Number(spread.toFixed(4)) };
}
