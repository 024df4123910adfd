// `npm run bench -- --flakes [FILE,…] [--times N]`: runs each test file N times (default 3), one
// run at a time, and reports every run that failed: a file that passes and fails on the same tree
// is a flake, whatever the suite said the first time. Exit 1 when a run failed. With no files:
// the files that flaked or hung before (FLAKY_FILES; CI ran them a second time until its 25 minutes ran short).
import { spawn } from 'node:child_process';

/** Files that failed or hung in whole-suite runs of ours (issue 31): the ones worth running again. */
export const FLAKY_FILES = ['test/isolation/limits.test.ts', 'test/cluster/lease.test.ts', 'test/postgres/restart.test.ts'];

/** Runs `file` once through scripts/test.mjs (its PostgreSQL, its bounds); resolves to its exit code and duration. */
function runOnce(root, file) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/test.mjs', file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk) => (tail = (tail + chunk).slice(-4_000));
    child.stdout.setEncoding('utf8').on('data', keep);
    child.stderr.setEncoding('utf8').on('data', keep);
    child.on('close', (status, signal) => resolve({ code: status ?? (signal ? 1 : 0), ms: Date.now() - started, tail }));
  });
}

export async function reportFlakes(root, files, times, log) {
  const found = [];
  for (const file of files) {
    for (let run = 1; run <= times; run++) {
      const { code, ms, tail } = await runOnce(root, file);
      log(`flakes: ${file} run ${run}/${times}: ${code === 0 ? 'pass' : `FAIL (exit ${code})`} in ${(ms / 1000).toFixed(1)} s`);
      if (code !== 0) found.push({ file, run, tail });
    }
  }
  for (const { file, run, tail } of found) log(`flakes: ${file} failed on run ${run}; its last output:\n${tail}`);
  log(`flakes: ${found.length} failed run(s) of ${files.length * times} (${files.join(', ')} × ${times})`);
  return found.length === 0 ? 0 : 1;
}
