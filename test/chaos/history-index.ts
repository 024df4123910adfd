// The history arranged by task: who created each task and how, every request about it, what the
// followers were told, and its final row and steps. Every promise reads the history through it.
import type { FaultEvent, FinalRow, FinalStepEvent, NodeCrashEvent, Numbered, NotificationEvent, RpcEvent, RunEvent, SampleEvent } from './history.js';
import { createdTaskId } from './transport.js';

export interface CreatedTask {
  readonly id: string;
  readonly owner: string;
  readonly create: Numbered<RpcEvent>;
}

/** A status some client saw, and when it could have been true (between the request's send and its answer). */
export interface Observation {
  readonly status: string;
  readonly t0: number;
  readonly t1: number;
  readonly seq: number;
  /** The result's text, when the answer carried a result (a 2026-07-28 tasks/get of a completed task). */
  readonly text?: string;
}

export class HistoryIndex {
  readonly run: RunEvent | undefined;
  readonly tasks = new Map<string, CreatedTask>();
  /** Requests naming a task id (tasks/get, update, cancel, result), by any owner, in history order. */
  readonly requests = new Map<string, Numbered<RpcEvent>[]>();
  readonly lists: Numbered<RpcEvent>[] = [];
  readonly notifications: Numbered<NotificationEvent>[] = [];
  readonly faults: Numbered<FaultEvent>[] = [];
  readonly crashes: Numbered<NodeCrashEvent>[] = [];
  readonly samples: Numbered<SampleEvent>[] = [];
  readonly finalRows = new Map<string, Numbered<{ kind: 'final-row'; row: FinalRow }>>();
  readonly steps = new Map<string, Numbered<FinalStepEvent>[]>();
  /** Whether the history holds the final rows (a run that died before them has none). */
  readonly finished: boolean;

  constructor(events: readonly Numbered[]) {
    let run: RunEvent | undefined;
    let finished = false;
    for (const event of events) {
      switch (event.kind) {
        case 'run':
          run = event;
          break;
        case 'rpc': {
          const created = createdTaskId(event);
          if (created) this.tasks.set(created, { id: created, owner: event.owner, create: event });
          const taskId = event.params['taskId'];
          if (typeof taskId === 'string') push(this.requests, taskId, event);
          if (event.method === 'tasks/list') this.lists.push(event);
          break;
        }
        case 'notification':
          this.notifications.push(event);
          break;
        case 'fault':
          this.faults.push(event);
          break;
        case 'node-crash':
          this.crashes.push(event);
          break;
        case 'sample':
          this.samples.push(event);
          break;
        case 'final-row':
          this.finalRows.set(event.row.id, event);
          break;
        case 'final-step':
          push(this.steps, event.task_id, event);
          break;
        case 'end':
          finished = true;
          break;
      }
    }
    this.run = run;
    this.finished = finished;
  }

  /** The owner of a task (its creator), if the history saw it created. */
  ownerOf(taskId: string): string | undefined {
    return this.tasks.get(taskId)?.owner;
  }

  /** The task's own owner's requests about it. */
  ownRequests(taskId: string): Numbered<RpcEvent>[] {
    const owner = this.ownerOf(taskId);
    return (this.requests.get(taskId) ?? []).filter((event) => event.owner === owner);
  }

  /** Every status the task's owner was told, by reads, cancels and lists, in history order. */
  observations(taskId: string): Observation[] {
    const seen: Observation[] = [];
    for (const event of this.ownRequests(taskId)) {
      const status = statusIn(event);
      const text = resultText(event.result?.['result']);
      if (status) seen.push({ status, t0: event.t0, t1: event.t1, seq: event.seq, ...(text === undefined ? {} : { text }) });
    }
    const owner = this.ownerOf(taskId);
    for (const list of this.lists) {
      if (list.owner !== owner) continue;
      const entry = (list.result?.['tasks'] as any[] | undefined)?.find((task) => task?.taskId === taskId);
      if (typeof entry?.status === 'string') seen.push({ status: entry.status, t0: list.t0, t1: list.t1, seq: list.seq });
    }
    return seen.sort((a, b) => a.seq - b.seq);
  }

  /** Whether `node` was out at `t`: killed, drained, stopped or restarting (a fault on it under way). */
  nodeOut(node: string, t: number): boolean {
    return this.faults.some((f) => f.node === node && NODE_OUTAGES.has(f.fault) && f.t <= t && (f.until ?? f.t) >= t);
  }

  /** Whether PostgreSQL was down (restarting) at `t`. */
  databaseDown(t: number): boolean {
    return this.faults.some((f) => f.fault.startsWith('pg-restart') && f.t <= t && (f.until ?? f.t) >= t);
  }
}

const NODE_OUTAGES = new Set(['sigkill', 'sigterm', 'sigstop', 'clock-skew', 'supervisor-restart']);

/** The status a successful tasks/get or 2025-11-25 tasks/cancel answered with. */
function statusIn(event: RpcEvent): string | undefined {
  if (!event.result || event.error) return undefined;
  if (event.method === 'tasks/get' || (event.method === 'tasks/cancel' && event.rev === '2025')) {
    const status = event.result['status'];
    return typeof status === 'string' ? status : undefined;
  }
  return undefined;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The text of a task result's first content block. */
export function resultText(result: any): string | undefined {
  const text = result?.content?.[0]?.text;
  return typeof text === 'string' ? text : undefined;
}
