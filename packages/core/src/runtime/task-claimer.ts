import { context as otelContext, type Context } from '@opentelemetry/api';
import type { TaskEvents } from '../store/task-events.js';
import type { TaskStore, Unsubscribe } from '../store/task-store.js';
import type { TaskRecord } from '../task/task-record.js';
import type { Logger } from '../log/logger.js';
import { logSafe } from '../log/log-safe.js';
import type { TaskTelemetry } from '../telemetry/task-telemetry.js';
import { creatorContext } from '../telemetry/task-trace-context.js';
import type { RunSlots } from './run-slots.js';
import { fromStoredCapabilities } from './stored-capabilities.js';
import type { TaskExecutor, TaskRunRequest } from './task-run-request.js';
import { labelsOf } from './task-labels.js';

/** What a {@link TaskClaimer} is built from. */
export interface TaskClaimerOptions {
  readonly store: TaskStore;
  readonly events: TaskEvents;
  readonly nodeId: string;
  /** The backstop: how often it claims when no event said anything is claimable. */
  readonly pollIntervalMs: number;
  readonly slots: RunSlots;
  readonly telemetry: TaskTelemetry;
  readonly logger: Logger;
  /** Starts the run of a task this node claimed. */
  readonly launch: (record: TaskRecord, request: TaskRunRequest<never>, parent: Context) => void;
}

/**
 * Takes claimable tasks (queued beyond a node's capacity, released by a node that was lost or
 * drained, answered after a park) of the tools this node registered, while it has free slots:
 * at every claimable event, every freed slot and a backstop poll. One claim at a time, and a
 * request meanwhile runs one more round, so claims never overshoot the node's capacity.
 */
export class TaskClaimer {
  readonly #options: TaskClaimerOptions;
  readonly #executors = new Map<string, TaskExecutor>();
  #timer: NodeJS.Timeout | undefined;
  #unclaimable: Unsubscribe = () => {};
  #claiming = false;
  #again = false;
  #stopped = false;

  constructor(options: TaskClaimerOptions) {
    this.#options = options;
  }

  /** Whether this node runs `tool`'s tasks that it claims. */
  runs(tool: string): boolean {
    return this.#executors.has(tool);
  }

  /** Registers how this node runs `tool`'s claimed tasks, and starts claiming. */
  register(tool: string, executor: TaskExecutor): void {
    this.#executors.set(tool, executor);
    this.#start();
  }

  /** Stops claiming for good (a drain or close). */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#unclaimable();
    this.#unclaimable = () => {};
  }

  /** Claims tasks while this node has free slots; one claimer at a time, re-run if asked meanwhile. */
  soon(): void {
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    if (this.#stopped || this.#executors.size === 0) return;
    this.#claiming = true;
    void this.#claimWhileRoom();
  }

  /** Listens for claimable tasks and polls for them as a backstop, once a tool is registered. */
  #start(): void {
    if (this.#timer || this.#stopped || this.#executors.size === 0) return;
    this.#unclaimable = this.#options.events.onClaimable?.(() => this.soon()) ?? (() => {});
    this.#timer = setInterval(() => this.soon(), this.#options.pollIntervalMs);
    // The claim poll alone keeps no process alive.
    this.#timer.unref();
    this.soon();
  }

  async #claimWhileRoom(): Promise<void> {
    const { slots, store, nodeId } = this.#options;
    try {
      do {
        this.#again = false;
        while (!this.#stopped && !slots.full) {
          // The slot is the claim's while its query is in flight: a request starting a task
          // meanwhile waits for the claim's answer (TaskRuntime.start), so a claim never lands on
          // a full node, and a claim that finds nothing leaves the slot to the request.
          slots.reserveForClaim();
          let record: TaskRecord | undefined;
          try {
            record = await store.claim(nodeId, [...this.#executors.keys()]);
            // The claimed run takes the slot before a waiting start looks again.
            if (record) this.#runClaimed(record);
          } finally {
            slots.unreserveClaim();
          }
          if (!record) break;
        }
      } while (this.#again && !this.#stopped);
    } catch (error) {
      this.#options.logger.error({ err: logSafe(error) }, 'claiming a task failed');
    } finally {
      this.#claiming = false;
    }
  }

  /** Runs a claimed task as its creating request would have: its stored arguments, capabilities and trace. */
  #runClaimed(record: TaskRecord): void {
    const executor = this.#executors.get(record.tool)!;
    this.#options.telemetry.claimed(labelsOf(record));
    const stored = fromStoredCapabilities(record.clientCapabilities);
    this.#options.launch(
      record,
      {
        owner: record.owner,
        tool: record.tool,
        scopes: record.scopes,
        args: record.args as never,
        execute: executor.execute,
        ...(stored.clientCapabilities === undefined ? {} : { clientCapabilities: stored.clientCapabilities }),
        ...(stored.carried === undefined ? {} : { carried: stored.carried }),
        resumable: record.resumable,
      },
      creatorContext(record) ?? otelContext.active(),
    );
  }
}
