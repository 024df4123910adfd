// A flood of a scenario in a process of its own, so that its loops never delay the measured
// clients in the measuring process: runs `script` (a file under bench/scenarios) with `env` for
// about `durationMs`, and parses the one JSON line of counts it prints last.
import { spawn } from 'node:child_process';
import path from 'node:path';

export async function runChildFlood<T>(root: string, script: string, env: Record<string, string>, durationMs: number): Promise<T> {
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', path.join('bench', 'scenarios', script)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4_000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), durationMs + 60_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const line = stdout.trim().split('\n').at(-1);
  if (code !== 0 || !line) throw new Error(`the flood process exited with ${code}: ${stderr}`);
  return JSON.parse(line) as T;
}
