import { metrics, type MeterProvider } from '@opentelemetry/api';

/** What the gauge reads of the node beside a PostgreSQL store: its LISTEN connection, if it has one. */
export interface ListenerStateSource {
  readonly listener?: { readonly state: string } | undefined;
}

/**
 * `mcp_tasks.listener.listening` (`mcp_tasks_listener_listening` on `/metrics`): 1 while this
 * node's LISTEN connection works, 0 while cancels and answers reach its runs by the poll alone
 * (a transaction pooler without `DIRECT_DATABASE_URL`, or a listener reconnecting). Not exported
 * before the listener first connects (or on a node without one).
 */
export function observeListenerGauge(node: ListenerStateSource, meterProvider: MeterProvider | undefined): void {
  const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/demo');
  const gauge = meter.createObservableGauge('mcp_tasks.listener.listening', {
    description: "1 while this node's LISTEN connection works, 0 while it relies on polling alone (a transaction pooler without DIRECT_DATABASE_URL, or reconnecting)",
  });
  gauge.addCallback((observer) => {
    const state = node.listener?.state;
    if (state === undefined || state === 'idle' || state === 'stopped') return;
    observer.observe(state === 'listening' ? 1 : 0);
  });
}
