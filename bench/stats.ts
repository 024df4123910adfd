/** Small statistics over samples: medians, percentiles, spreads. */

/** The p-th percentile (0–100) by linear interpolation between closest ranks; NaN for no samples. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** What a metric's runs (or a set of samples) look like. */
export interface Summary {
  readonly n: number;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly p5: number;
  readonly p95: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    median: median(values),
    min: values.length ? Math.min(...values) : Number.NaN,
    max: values.length ? Math.max(...values) : Number.NaN,
    p5: percentile(values, 5),
    p95: percentile(values, 95),
  };
}
