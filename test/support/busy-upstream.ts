// The busy, hostile upstream of the proxy tests (test/fixtures/busy-upstream.fixture.ts) as a
// real process, and what it reports of itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { createTestDatabase, type TestDatabase } from './database.js';
import { ROOT, spawnDemoNode, waitForOutput, type DemoProcess } from './demo-process.js';

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


/** A busy upstream and a demo node in front of it, with tokens for alice and bob: what a describe's tests share. */
export interface GatewayBeforeBusyUpstream {
  readonly db: TestDatabase;
  readonly upstream: Awaited<ReturnType<typeof spawnBusyUpstream>>;
  readonly gateway: DemoProcess;
}

/**
 * Starts, before the tests of the calling `describe`, a test database, a busy upstream with
 * `upstreamEnv`, and a demo node `name` in front of it with the environment `gatewayEnv` makes of
 * the upstream's URL and the tokens file; stops them all after. The fields are set once `before` ran.
 */
export function gatewayBeforeBusyUpstream(name: string, upstreamEnv: Record<string, string>, gatewayEnv: (upstreamUrl: string) => Record<string, string>): GatewayBeforeBusyUpstream {
  const fixture = {} as { db: TestDatabase; upstream: Awaited<ReturnType<typeof spawnBusyUpstream>>; gateway: DemoProcess };
  let dir: string | undefined;
  before(async () => {
    fixture.db = await createTestDatabase();
    dir = await mkdtemp(path.join(tmpdir(), `${name}-`));
    const tokens = path.join(dir, 'tokens.json');
    await writeFile(tokens, JSON.stringify({ alice: { sub: 'alice', clientId: 'app', scopes: [] }, bob: { sub: 'bob', clientId: 'app', scopes: [] } }));
    fixture.upstream = await spawnBusyUpstream(upstreamEnv);
    fixture.gateway = await spawnDemoNode(name, { ...gatewayEnv(fixture.upstream.url), DATABASE_URL: fixture.db.url, MCP_TASKS_TOKENS: tokens });
  });
  after(async () => {
    fixture.gateway?.child.kill('SIGKILL');
    fixture.upstream?.child.kill('SIGKILL');
    await fixture.gateway?.exited;
    await fixture.db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return fixture;
}
