/** Closed-loop load: `workers` loops, each running `iterations` operations back to back. */
export async function closedLoop(workers: number, iterations: number, operation: (worker: number, iteration: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let iteration = 0; iteration < iterations; iteration += 1) await operation(worker, iteration);
    }),
  );
  return performance.now() - started;
}

/** Closed-loop load for a fixed time: each worker repeats `operation` until `durationMs` passed. Returns the elapsed ms. */
export async function closedLoopFor(workers: number, durationMs: number, operation: (worker: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (performance.now() < deadline) await operation(worker);
    }),
  );
  return performance.now() - started;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}
