import type { JsonObject } from './mcp-http-client.js';
import { printable } from '../printable.js';

/** How the command shows a task's state as it changes: a live line on a terminal, plain lines otherwise. */
export interface ProgressDisplay {
  update(task: JsonObject): void;
  /** Takes the live line off the screen until the next update (before a prompt). */
  clear(): void;
  /** Writes a whole line above the live line. */
  say(line: string): void;
  stop(): void;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const BAR_WIDTH = 30;

/** `n/total` at the start of a status message (what `ctx.progress(n, total)` writes). */
export function progressFraction(message: unknown): { done: number; total: number } | undefined {
  if (typeof message !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)(?!\d)/.exec(message);
  if (!match) return undefined;
  const done = Number(match[1]);
  const total = Number(match[2]);
  return total > 0 ? { done: Math.min(done, total), total } : undefined;
}

/** A short duration for the bar: 850ms, 42s, 3m05s, 1h02m. */
export function shortDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3_600)}h${String(Math.floor((seconds % 3_600) / 60)).padStart(2, '0')}m`;
}

/**
 * Elapsed time since the call started, and, once the task moved on from the first fraction seen,
 * its rate (units a second, from that first sample: steady for a task that goes at one pace) and
 * the time left at that rate.
 */
export function pace(elapsedMs: number, first: { done: number; at: number } | undefined, fraction: { done: number; total: number }, now: number): string {
  const parts = [`${shortDuration(elapsedMs)} elapsed`];
  if (first !== undefined && fraction.done > first.done && now - first.at >= 500) {
    const perSecond = (fraction.done - first.done) / ((now - first.at) / 1_000);
    parts.push(`${perSecond >= 10 ? Math.round(perSecond) : perSecond.toFixed(1)}/s`);
    if (fraction.done < fraction.total) parts.push(`ETA ${shortDuration(((fraction.total - fraction.done) / perSecond) * 1_000)}`);
  }
  return parts.join(', ');
}

/** A bar (or a spinner and the message) redrawn in place on `stream`, a terminal. */
export function terminalDisplay(stream: NodeJS.WritableStream, columns: () => number, now: () => number = Date.now): ProgressDisplay {
  const started = now();
  // The first fraction seen and when: where the rate is measured from.
  let first: { done: number; at: number } | undefined;
  let frame = 0;
  let task: JsonObject | undefined;
  let shown = false;
  // Off while a question is open, so the redraw does not wipe the prompt; the next state brings it back.
  let hidden = false;
  const draw = () => {
    if (task === undefined || hidden) return;
    const status = String(task['status']);
    const message = typeof task['statusMessage'] === 'string' ? printable(task['statusMessage']) : '';
    const fraction = progressFraction(message);
    let line: string;
    const at = now();
    if (fraction) {
      if (first === undefined || fraction.done < first.done) first = { done: fraction.done, at };
      const filled = Math.round((fraction.done / fraction.total) * BAR_WIDTH);
      line = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.round((fraction.done / fraction.total) * 100)}% ${message} (${pace(at - started, first, fraction, at)})`;
    } else {
      line = `${SPINNER[frame % SPINNER.length]} ${printable(status)}${message ? `: ${message}` : ''} (${shortDuration(at - started)} elapsed)`;
    }
    stream.write(`\r\x1b[2K${line.slice(0, Math.max(10, columns() - 1))}`);
    shown = true;
  };
  const timer = setInterval(() => {
    frame += 1;
    draw();
  }, 100);
  timer.unref();
  const erase = () => {
    if (shown) stream.write('\r\x1b[2K');
    shown = false;
  };
  return {
    update(next) {
      task = next;
      hidden = false;
      draw();
    },
    clear() {
      erase();
      hidden = true;
    },
    say(line) {
      erase();
      stream.write(`${line}\n`);
      draw();
    },
    stop() {
      clearInterval(timer);
      erase();
      task = undefined;
    },
  };
}

/** One line per change of status or message, for logs and pipes. */
export function plainDisplay(write: (line: string) => void): ProgressDisplay {
  let last = '';
  return {
    update(task) {
      const message = typeof task['statusMessage'] === 'string' ? ` (${task['statusMessage']})` : '';
      const line = printable(`task ${String(task['taskId'])}: ${String(task['status'])}${message}`);
      if (line !== last) write(line);
      last = line;
    },
    clear() {},
    say: write,
    stop() {},
  };
}
