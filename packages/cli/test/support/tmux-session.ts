import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Why tmux cannot drive a terminal here, or undefined when it can. */
export function tmuxUnavailable(): string | undefined {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'tmux is not installed (apt-get install -y tmux): the pseudo-terminal tests need it';
  }
}

/** One command running on a pseudo-terminal of its own (a detached tmux server on a private socket). */
export interface TmuxSession {
  /** What the terminal shows now (the visible screen, trailing blank lines dropped). */
  screen(): Promise<string>;
  /** Types keys (tmux key names: 'Enter', 'C-c', or literal text). */
  keys(...keys: string[]): Promise<void>;
  /** Waits until the screen matches `pattern`; resolves with the screen. */
  until(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** The command's exit code once it exited. */
  exitCode(timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

export async function startTmux(command: readonly string[], env: Record<string, string> = {}): Promise<TmuxSession> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-tmux-'));
  const socket = path.join(dir, 'socket');
  const tmux = (...args: string[]) => run('tmux', ['-S', socket, '-f', '/dev/null', ...args]);
  const exitFile = path.join(dir, 'exit');
  // A shell around the command would take the Ctrl-C too (and die of it), and tmux's own exit
  // status of a dead pane can stay blank: a small node wrapper that ignores SIGINT records it.
  // (No ';' at its end: tmux reads an argument ending in one as a command separator.)
  const wrapper = [
    "process.on('SIGINT', () => {});",
    "const [file, cmd, ...args] = process.argv.slice(1);",
    "const r = require('node:child_process').spawnSync(cmd, args, { stdio: 'inherit' });",
    "require('node:fs').writeFileSync(file, String(r.status ?? 128 + require('node:os').constants.signals[r.signal]));",
  ].join(' ').replace(/;$/, '');
  const vars = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // remain-on-exit keeps the pane and its last screen once the command exited. 200 columns: a
  // prompt naming a task (28 characters) and its owner fits on one line, so a pattern need not
  // span a wrapped one.
  await tmux('start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';', 'new-session', '-d', '-x', '200', '-y', '30', ...vars, process.execPath, '-e', wrapper, exitFile, ...command);
  const screen = async () => (await tmux('capture-pane', '-p')).stdout.replace(/\s+$/, '');
  return {
    screen,
    async keys(...keys) {
      await tmux('send-keys', ...keys);
    },
    async until(pattern, timeoutMs) {
      const start = Date.now();
      for (;;) {
        const now = await screen();
        if (pattern.test(now)) return now;
        if (Date.now() - start > timeoutMs) throw new Error(`the terminal did not show ${pattern} within ${timeoutMs} ms; it shows:\n${now}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async exitCode(timeoutMs) {
      const start = Date.now();
      for (;;) {
        const text = await readFile(exitFile, 'utf8').catch(() => '');
        if (text !== '') return Number(text);
        if (Date.now() - start > timeoutMs) throw new Error(`the command did not exit within ${timeoutMs} ms; the terminal shows:\n${await screen()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
