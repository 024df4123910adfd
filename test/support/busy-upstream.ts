// The busy, hostile upstream of the proxy tests (test/fixtures/busy-upstream.fixture.ts) as a
// real process, and what it reports of itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT, waitForOutput } from './demo-process.js';

export interface UpstreamState {
  working: number;
  /** Working tasks by owner (the Authorization header the upstream saw; '' for none). */
  workingByOwner: Record<string, number>;
  gets: number;
  refused: number;
  hugeSent: number;
  hugeOpen: number;
}

export async function spawnBusyUpstream(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; state(): Promise<UpstreamState>; refuseAll(on: boolean): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/busy-upstream.fixture.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const url = await waitForOutput(() => output, /listening on (http:\/\/\S+\/mcp)/, exited, 30_000);
    return {
      child,
      url,
      state: async () => (await (await fetch(url.replace(/\/mcp$/, '/state'))).json()) as UpstreamState,
      refuseAll: async (on) => void (await fetch(url.replace(/\/mcp$/, '/refuse'), { method: 'POST', body: on ? 'on' : 'off' })).body?.cancel(),
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

