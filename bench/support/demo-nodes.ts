// Demo nodes as separate processes running the built `packages/demo/dist/node/main.js`, as in production
// (scripts/bench.mjs runs `tsc -b` first).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface DemoNode {
  readonly url: string;
  readonly process: ChildProcess;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startDemoNode(root: string, databaseUrl: string, nodeId: string, env: Record<string, string> = {}): Promise<DemoNode> {
  const port = await freePort();
  // One benchmark client is one owner at thousands of requests a second: the per-owner rate
  // limit and in-flight cap would measure themselves. A scenario about limits passes its own
  // MCP_TASKS_RATE_LIMIT and MCP_TASKS_MAX_IN_FLIGHT.
  const nodeEnv = { ...process.env, MCP_TASKS_RATE_LIMIT: 'off', MCP_TASKS_MAX_IN_FLIGHT: 'off', ...env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', NODE_ID: nodeId };
  return spawnListening(root, ['packages/demo/dist/node/main.js'], nodeEnv, `demo node ${nodeId}`, 60_000);
}

/** Starts `node ARGS` and resolves once it prints `listening on URL` (demo nodes, the bare server). */
export async function spawnListening(root: string, args: readonly string[], env: NodeJS.ProcessEnv, name: string, timeoutMs: number): Promise<DemoNode> {
  const child = spawn(process.execPath, [...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4_000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${timeoutMs / 1000} s: ${stderr}`)), timeoutMs);
    // Only until the line is seen, and only the last few lines: kept and searched whole at every
    // chunk for the node's lifetime, its log made each chunk cost the load generator more (scenario
    // 23's clients took half again the CPU per task in its second phase).
    let stdout = '';
    const listening = (chunk: Buffer) => {
      stdout = (stdout + chunk).slice(-4_000);
      const match = /listening on (http:\/\/[^\s"]+)/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', listening).resume();
      resolve(match[1]!);
    };
    child.stdout!.on('data', listening);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${stderr}`));
    });
  });
  return { url, process: child };
}

export async function stopDemoNode(node: DemoNode): Promise<void> {
  if (node.process.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => node.process.once('exit', () => resolve()));
  node.process.kill('SIGTERM');
  const timer = setTimeout(() => node.process.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
