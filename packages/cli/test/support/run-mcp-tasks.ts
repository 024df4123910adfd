import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The real bin, as npm links it: the build that `npm test` runs first (tsc -b).
export const bin = path.join(packageRoot, 'dist/main.js');

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs `mcp-tasks ...args` (not on a terminal: stdin is `input`, or empty); a run that outlives
 * `timeoutMs` is killed and fails the test. `DATABASE_URL` is only what `env` gives.
 */
export function mcpTasks(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { input?: string; timeoutMs?: number } = {}): Promise<Run> {
  const { DATABASE_URL: _ignored, MCP_TASKS_TOKEN: _token, ...base } = process.env;
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [bin, ...args], { env: { ...base, ...env }, timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error && (error as { killed?: boolean }).killed) return reject(new Error(`mcp-tasks ${args.join(' ')} did not exit within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
      const code = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin!.end(options.input ?? '');
  });
}
