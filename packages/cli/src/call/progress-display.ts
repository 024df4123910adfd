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

/** A bar (or a spinner and the message) redrawn in place on `stream`, a terminal. */
export function terminalDisplay(stream: NodeJS.WritableStream, columns: () => number): ProgressDisplay {
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
    if (fraction) {
      const filled = Math.round((fraction.done / fraction.total) * BAR_WIDTH);
      line = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.round((fraction.done / fraction.total) * 100)}% ${message}`;
    } else {
      line = `${SPINNER[frame % SPINNER.length]} ${printable(status)}${message ? `: ${message}` : ''}`;
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
