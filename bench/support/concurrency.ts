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

/** Fires `request(i)` at `ratePerS` for `durationMs` without waiting for earlier replies; returns each latency (ms). */
export async function openLoop(ratePerS: number, durationMs: number, request: (i: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.round((ratePerS * durationMs) / 1000);
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / ratePerS;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    inFlight.push(request(i).then(() => void latencies.push(performance.now() - sent)));
  }
  await Promise.all(inFlight);
  return latencies;
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}
