/** The create-and-complete load that scenarios 1 and 2 put on every subject alike. */
export interface LoadShape {
  /** Concurrent clients, and the pool size of every subject. */
  readonly clients: number;
  /** Tasks each client creates and completes per run. */
  readonly perClient: number;
}

/** Something whose create-then-complete rate is measured: plain SQL, the store, pg-boss. */
export interface ThroughputSubject {
  readonly label: string;
  /** One timed run; resolves with tasks created and completed per second. */
  run(round: number, shape: LoadShape): Promise<number>;
  close(): Promise<void>;
}

/** The result every subject stores for a completed task. */
export const RESULT = { content: [{ type: 'text', text: 'ok' }] };

export function tasksPerSecond(shape: LoadShape, elapsedMs: number): number {
  return (shape.clients * shape.perClient) / (elapsedMs / 1000);
}
