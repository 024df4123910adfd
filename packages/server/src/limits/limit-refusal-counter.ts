import { metrics, type Counter, type MeterProvider } from '@opentelemetry/api';

/** The limits that count their refusals here. */
const KNOWN_LIMITS = ['rateLimit', 'inFlight.maxPerOwner', 'listenStreams.maxPerOwner', 'listenStreams.maxPerNode'] as const;

/**
 * `mcp_tasks.limit.refusals`: requests a per-owner limit refused on this node, by the limit
 * (`rateLimit`, `inFlight.maxPerOwner`, `listenStreams.maxPerOwner`, …) and whether the answer
 * was held. A flood shows here before it shows anywhere else: refusals are never logged, so that a
 * caller cannot fill the log with them.
 */
export class LimitRefusalCounter {
  readonly #refusals: Counter;

  constructor(meterProvider?: MeterProvider) {
    const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/server');
    this.#refusals = meter.createCounter('mcp_tasks.limit.refusals', { description: 'Requests refused by a per-owner limit on this node, by limit and whether the answer was held' });
    // Exported at 0 from the start, so a rate of every limit has a series before its first refusal.
    for (const limit of KNOWN_LIMITS) this.#refusals.add(0, { 'mcp_tasks.limit': limit, 'mcp_tasks.refusal.held': false });
  }

  refused(limit: string, held: boolean): void {
    this.#refusals.add(1, { 'mcp_tasks.limit': limit, 'mcp_tasks.refusal.held': held });
  }
}
