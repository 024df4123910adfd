// The bench's soak: the chaos soak (test/chaos/main.ts) for `minutes` on `seed` (random when not
// given: printed by the soak, so it replays with `npm run chaos -- --seed N --compiled`). Resolves
// to its exit code. Its nodes run the build the bench has just brought up to date (`--compiled`).
import { spawn } from 'node:child_process';

export function runSoak(root, minutes, seed) {
  const args = ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'test/chaos/main.ts', '--compiled', '--minutes', String(minutes), ...(seed === undefined ? [] : ['--seed', String(seed)])];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => child.kill(signal));
    child.on('close', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  });
}
