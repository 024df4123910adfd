import type { LineReader } from './line-reader.js';
import type { ProgressDisplay } from './progress-display.js';

/** What a call shows and asks while it runs (on stderr and stdin, so stdout carries only the result). */
export interface CallUi {
  readonly display: ProgressDisplay;
  readonly reader: LineReader;
  /** A line for the user, above the live line. */
  readonly say: (line: string) => void;
}
