import { metrics, type Counter, type MeterProvider } from '@opentelemetry/api';
import { refusalReasonOf } from './limit-refusal.js';

/** The limits that count their refusals here. */
const KNOWN_LIMITS = [
  'rateLimit',
  'inFlight.maxPerOwner',
  'toolRuns.createsPerSecond',
  'toolRuns.maxPerOwner',
  'toolRuns.maxPerNode',
  'listenStreams.maxPerOwner',
  'listenStreams.maxPerNode',
  'resultStreams.maxPerOwner',
  'resultStreams.maxPerNode',
  'admission.maxQueue',
  'admission.maxWaitMs',
] as const;

/**
 * `mcp_tasks.limit.refusals`: requests a limit refused on this node, by the limit (`rateLimit`,
 * `inFlight.maxPerOwner`, `listenStreams.maxPerOwner`, `admission.maxQueue`, …), the reason
 * (`owner_limit`: an owner's share; `node_saturation`: the node's own capacity) and whether the
 * answer was held. A flood shows here before it shows anywhere else: refusals are never logged, so that a
 * caller cannot fill the log with them.
 */
export class LimitRefusalCounter {
  readonly #refusals: Counter;

  constructor(meterProvider?: MeterProvider) {
    const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/server');
    this.#refusals = meter.createCounter('mcp_tasks.limit.refusals', { description: 'Requests refused by a limit on this node, by limit, reason (owner_limit, node_saturation) and whether the answer was held' });
    // Exported at 0 from the start, so a rate of every limit has a series before its first refusal.
    for (const limit of KNOWN_LIMITS) {
      this.#refusals.add(0, { 'mcp_tasks.limit': limit, 'mcp_tasks.refusal.reason': refusalReasonOf(limit), 'mcp_tasks.refusal.held': false });
    }
  }

  refused(limit: string, held: boolean): void {
    this.#refusals.add(1, { 'mcp_tasks.limit': limit, 'mcp_tasks.refusal.reason': refusalReasonOf(limit), 'mcp_tasks.refusal.held': held });
  }
}
