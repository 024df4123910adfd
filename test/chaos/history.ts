// The soak's history: every request and answer as the clients saw them, the faults, samples of
// the live rows, and the final rows, as JSON lines. The checker reads nothing else.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

export type Revision = '2026' | '2025';

export interface RunEvent {
  readonly kind: 'run';
  readonly t: number;
  readonly seed: number;
  readonly minutes: number;
  readonly nodes: number;
  /** The nodes' names (NODE_ID). */
  readonly nodeNames?: readonly string[];
  readonly leaseMs: number;
  readonly maxPerPrincipal: number;
  /** Each owner's label and the token subject its rows carry (null: the host scope of a node without tokens). */
  readonly owners: readonly { readonly label: string; readonly sub: string | null }[];
}

/** One request as its client saw it: sent at `t0`, answered (or failed) at `t1`. */
export interface RpcEvent {
  readonly kind: 'rpc';
  readonly t0: number;
  readonly t1: number;
  readonly client: string;
  readonly owner: string;
  readonly rev: Revision;
  readonly node: string;
  readonly method: string;
  readonly params: Record<string, any>;
  readonly status?: number;
  readonly result?: Record<string, any>;
  readonly error?: { code: number; message: string; data?: unknown };
  /** A transport failure (connection refused, timeout): no answer. */
  readonly failure?: string;
}

/** A `notifications/tasks` message a follower received. */
export interface NotificationEvent {
  readonly kind: 'notification';
  readonly t: number;
  readonly client: string;
  readonly owner: string;
  readonly node: string;
  readonly taskId: string;
  readonly status: string;
}

export interface FaultEvent {
  readonly kind: 'fault';
  readonly t: number;
  readonly fault: string;
  readonly node?: string;
  readonly detail?: string;
  /** When the fault's effect ended (a restart done, a stall over). */
  readonly until?: number;
}

/** A node process that exited without being told to (the harness then starts it again, as a supervisor would). */
export interface NodeCrashEvent {
  readonly kind: 'node-crash';
  readonly t: number;
  readonly node: string;
  readonly code: number | null;
  readonly signal: string | null;
  /** The last lines of its output. */
  readonly output: string;
}

export interface LiveRow {
  readonly id: string;
  readonly owner_key: string;
  readonly status: string;
  readonly node_id: string | null;
}

/** The live rows (working, input_required) at one instant: one statement, so one snapshot. */
export interface SampleEvent {
  readonly kind: 'sample';
  readonly t: number;
  readonly live: readonly LiveRow[];
}

export interface FinalRow {
  readonly id: string;
  readonly owner_subject: string;
  readonly owner_key: string;
  readonly tool: string;
  readonly status: string;
  readonly result: any;
  readonly error: any;
  readonly node_id: string | null;
  readonly attempt: number;
  readonly handovers: number;
  readonly max_attempts: number;
  readonly resumable: boolean;
  readonly expired: boolean;
  /** last_updated_at in epoch milliseconds (the database's clock, the same host's). */
  readonly updated: number;
  /** Whether node_id names a node whose lease has not expired. */
  readonly lease_live: boolean;
}

export interface FinalRowEvent {
  readonly kind: 'final-row';
  readonly row: FinalRow;
}

export interface FinalStepEvent {
  readonly kind: 'final-step';
  readonly task_id: string;
  readonly name: string;
  readonly starts: number;
  readonly done: boolean;
}

export interface EndEvent {
  readonly kind: 'end';
  readonly t: number;
}

export type HistoryEvent = RunEvent | RpcEvent | NotificationEvent | FaultEvent | NodeCrashEvent | SampleEvent | FinalRowEvent | FinalStepEvent | EndEvent;

/** An event with its place in the history (the line number, from 1). */
export type Numbered<E extends HistoryEvent = HistoryEvent> = E & { readonly seq: number };

export class History {
  readonly events: Numbered[] = [];
  readonly #file: string | undefined;

  constructor(file?: string) {
    this.#file = file;
    if (file) writeFileSync(file, '');
  }

  add<E extends HistoryEvent>(event: E): Numbered<E> {
    const numbered = { seq: this.events.length + 1, ...event } as Numbered<E>;
    this.events.push(numbered);
    if (this.#file) appendFileSync(this.#file, JSON.stringify(numbered) + '\n');
    return numbered;
  }
}

export function readHistory(file: string): Numbered[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Numbered);
}
