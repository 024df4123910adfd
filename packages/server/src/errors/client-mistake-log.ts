import { defaultLogger, logSafe } from '@mcp-tasks/core';
import { metrics, type Counter, type MeterProvider } from '@opentelemetry/api';

/** Options of {@link ClientMistakeLog}. */
export interface ClientMistakeLogOptions {
  /** At most one line per this many ms, node-wide; the next line counts what was left out. Default 60 000. */
  readonly intervalMs?: number;
  /** Where the line goes. Default: the process's logger, at `warn`. */
  readonly log?: (line: string) => void;
}

/**
 * Client mistakes (requests the SDK refused: see `clientMistakeKind`) are counted, and logged at
 * most as one sampled line per interval without a stack: one record, one line, whatever a caller
 * sends. A flood of 19 679 malformed requests in 10 s used to write 78 716 lines (each a stack),
 * 10.7 MB; it now writes one line and a count. The counter is `mcp_tasks.client_mistakes`, by
 * `mcp_tasks.mistake` (the kind).
 */
export class ClientMistakeLog {
  readonly #counter: Counter;
  readonly #intervalMs: number;
  readonly #log: (line: string) => void;
  #lastLoggedAt = Number.NEGATIVE_INFINITY;
  /** Mistakes since the last line, by kind. */
  #left = new Map<string, number>();

  constructor(meterProvider: MeterProvider | undefined, options: ClientMistakeLogOptions = {}) {
    const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/server');
    this.#counter = meter.createCounter('mcp_tasks.client_mistakes', { description: 'Requests refused as malformed (a client mistake) on this node, by kind; logged at most once per interval' });
    this.#intervalMs = options.intervalMs ?? 60_000;
    if (!(this.#intervalMs >= 0)) throw new RangeError('clientMistakes.intervalMs must be a non-negative number of ms');
    this.#log = options.log ?? ((line) => defaultLogger().warn({}, line));
  }

  record(kind: string, error: Error): void {
    this.#counter.add(1, { 'mcp_tasks.mistake': kind });
    const now = Date.now();
    if (now - this.#lastLoggedAt < this.#intervalMs) {
      this.#left.set(kind, (this.#left.get(kind) ?? 0) + 1);
      return;
    }
    const left = [...this.#left].map(([k, n]) => `${k} ×${n}`).join(', ');
    this.#lastLoggedAt = now;
    this.#left = new Map();
    // The message only (escaped, cut): its stack says nothing about the client.
    const message = logSafe(error.message, 200);
    this.#log(`mcp-tasks: refused a malformed request (${kind}): ${message}${left === '' ? '' : `; also refused since the last such line: ${left}`}`);
  }
}
