/** The shapes scenarios hand to the runner and the markdown writer. */

/** What every scenario gets. */
export interface BenchContext {
  /** The fresh database of this run. */
  readonly databaseUrl: string;
  /** Small counts, one run per measurement: keeps the harness working in CI, measures nothing. */
  readonly quick: boolean;
  /** Runs per measurement (≥ 3 in full mode). */
  readonly runs: number;
  /** The repository root (demo processes are started from it). */
  readonly root: string;
  log(message: string): void;
}

/** A target on a metric's median. */
export interface Target {
  /** As the document states it, e.g. "≥ 400 tasks/s". */
  readonly text: string;
  /** Judged on the median of the runs, unless the target says otherwise (`values`: every run). */
  readonly met: (median: number, values: readonly number[]) => boolean;
}

/** One measured quantity: one value per run. */
export interface Metric {
  readonly name: string;
  readonly unit: string;
  readonly values: readonly number[];
  readonly target?: Target;
  /** Decimals shown (default: by magnitude). */
  readonly digits?: number;
}

export interface ScenarioResult {
  /** Section number, 1–7. */
  readonly number: number;
  readonly title: string;
  /** What was measured and how, in a few sentences. */
  readonly method: string;
  readonly metrics: readonly Metric[];
  /** Findings: why a target was missed, what the profile showed. */
  readonly notes: readonly string[];
}

export const atLeast = (value: number, unit = ''): Target => ({ text: `≥ ${value}${unit ? ` ${unit}` : ''}`, met: (m) => m >= value });
export const atMost = (value: number, unit = ''): Target => ({ text: `≤ ${value}${unit ? ` ${unit}` : ''}`, met: (m) => m <= value });
export const above = (value: number, unit = ''): Target => ({ text: `> ${value}${unit ? ` ${unit}` : ''}`, met: (m) => m > value });
/** Every run must equal `value`. */
export const alwaysEqualTo = (value: number): Target => ({ text: `= ${value} in every run`, met: (_m, values) => values.every((v) => v === value) });
