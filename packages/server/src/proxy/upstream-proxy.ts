import { defaultLogger, logSafe, type JsonObject, type TaskRef, type TaskRuntime, type UpstreamCancelLedger } from '@mcp-tasks/core';
import type { JSONRPCRequest, Result, ServerContext } from '@modelcontextprotocol/server';
import { toProtocolError } from '../errors/to-protocol-error.js';
import type { HandlerDeps } from '../handlers/handler-deps.js';
import type { TaskCallRevision } from '../handlers/tools-call.js';
import type { MountedTool } from './mounted-tool.js';
import { PendingRelays } from './pending-relays.js';
import { proxiedToolsCall } from './proxied-tools-call.js';
import { relayExecute, UPSTREAM_TASK_STEP, type JournaledUpstreamTask, type RelayArgs } from './relay-task.js';
import type { UpstreamMount } from './upstream-mount.js';
import { MemoryUpstreamCancelLedger } from './memory-upstream-cancel-ledger.js';
import { UpstreamCancelService, type UpstreamCancelServiceConfig } from './upstream-cancel-service.js';
import type { UpstreamTask } from './upstream-client.js';

/**
 * How a proxy owes an upstream a cancel: `taskId` is the gateway's own task (or a key of its own
 * for a task none mirrors); `subject`: the gateway caller whose upstream identity made the task.
 */
export type OweUpstreamCancel = (taskId: string, mount: UpstreamMount, task: Pick<UpstreamTask, 'taskId' | 'session'>, subject?: string) => Promise<void>;

/**
 * The upstreams one handler mounts: their tools for `tools/list`, their calls, and the relay
 * runs of the tasks they make, which this node registers for claiming as soon as it knows the
 * tools (so a relay released by a lost node is taken over here).
 */
export class UpstreamProxy {
  readonly #mounts: ReadonlyMap<string, UpstreamMount>;
  readonly #pending = new PendingRelays();
  readonly #execute: (args: unknown, ctx: never) => Promise<JsonObject>;
  readonly #warmUps: Array<{ stop(): void }> = [];
  readonly #maxArgumentBytes: number;

  readonly #tasks: boolean;
  readonly #store: TaskRuntime['store'];
  readonly #ledger: UpstreamCancelLedger;
  readonly #cancels: UpstreamCancelService;
  readonly #owe: OweUpstreamCancel;

  /** `tasks` false: every call goes upstream without the extension (this server makes no tasks). */
  constructor(runtime: TaskRuntime, tasks: boolean, mounts: readonly UpstreamMount[], maxArgumentBytes: number, cancels: UpstreamCancelServiceConfig = {}) {
    this.#tasks = tasks;
    this.#store = runtime.store;
    const byName = new Map<string, UpstreamMount>();
    for (const mount of mounts) {
      if (byName.has(mount.name)) throw new Error(`McpTasks: two upstreams are named ${mount.name}`);
      byName.set(mount.name, mount);
    }
    this.#mounts = byName;
    this.#maxArgumentBytes = maxArgumentBytes;
    // Owed cancels live where every node sees them when the store can share them, so whichever
    // node is up delivers them; else in this process.
    this.#ledger = runtime.store.upstreamCancels ?? new MemoryUpstreamCancelLedger();
    this.#cancels = new UpstreamCancelService(this.#ledger, byName, cancels);
    this.#cancels.start();
    this.#owe = (taskId, mount, task, subject) => this.#oweCancel(taskId, mount, task, subject);
    this.#execute = relayExecute({ mounts: byName, pending: this.#pending, store: runtime.store, oweCancel: this.#owe }) as never;
    for (const mount of mounts) {
      mount.onTools((tools) => {
        if (!tasks) return;
        for (const tool of tools) runtime.registerTool(tool.exposed, { resumable: true, execute: this.#execute as never });
      });
      this.#warmUps.push(mount.warmUp());
    }
  }

  /** The upstream tool served as `name`, if any (its upstream's list fetched when stale). */
  async find(name: string): Promise<{ mount: UpstreamMount; tool: MountedTool } | undefined> {
    for (const mount of this.#mounts.values()) {
      const tool = await mount.find(name).catch(() => undefined);
      if (tool) return { mount, tool };
    }
    return undefined;
  }

  /** Every mounted tool's listing; an upstream that cannot list its tools is left out (and logged). */
  async listings(ownNames: ReadonlySet<string>): Promise<JsonObject[]> {
    const lists = await Promise.all(
      [...this.#mounts.values()].map(async (mount) => {
        try {
          return [...(await mount.tools()).values()];
        } catch (error) {
          defaultLogger().error({ upstream: mount.name, err: logSafe(error instanceof Error ? error.message : error) }, 'the upstream tools are not listed');
          return [];
        }
      }),
    );
    // A name is listed once, for the tool a call of it reaches: the host's own tool wins over an
    // upstream's, and an earlier upstream (in the order given) over a later one, as `find` routes.
    const served = new Set(ownNames);
    const listed: JsonObject[] = [];
    for (const tool of lists.flat()) {
      if (served.has(tool.exposed)) continue;
      served.add(tool.exposed);
      listed.push(tool.listing(this.#tasks));
    }
    return listed;
  }

  /**
   * `tools/call`: an upstream tool's calls are proxied, everything else (the host's own tools,
   * `ownNames`, first) goes to `local`. `revision`: how this request's client asks for tasks (the
   * extension's by default; 2025-11-25's `params.task`).
   */
  route(
    deps: HandlerDeps,
    local: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
    ownNames: ReadonlySet<string>,
    revision?: TaskCallRevision,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const callDeps = { ...deps, pending: this.#pending, oweCancel: this.#owe, maxArgumentBytes: this.#maxArgumentBytes, execute: this.#execute, tasks: this.#tasks, ...(revision ? { revision } : {}) };
    return async (request, ctx) => {
      const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
      const found = typeof params.name === 'string' && !ownNames.has(params.name) ? await this.find(params.name) : undefined;
      if (!found) return local(request, ctx);
      try {
        return await proxiedToolsCall(callDeps, found.mount, found.tool, request, ctx);
      } catch (error) {
        throw toProtocolError(error);
      }
    };
  }

  /**
   * `tasks/cancel` that also cancels the upstream task of a proxied task, from the journal, on the
   * node that received the cancel: the relay does it too when it runs, but its node may be gone
   * and no node may have claimed it yet (a cancelled task is never claimed again).
   */
  cancelling(deps: HandlerDeps, cancel: (params: unknown, ctx: ServerContext) => Promise<Result>): (params: unknown, ctx: ServerContext) => Promise<Result> {
    return async (params, ctx) => {
      const answer = await cancel(params, ctx);
      const taskId = (params as { taskId: string }).taskId;
      this.cancelled({ taskId, owner: await deps.ownerOf(ctx) });
      return answer;
    };
  }

  /** A task was cancelled on this node (by either revision's `tasks/cancel`): a proxied one's upstream task is cancelled now, from the journal (in the background). */
  cancelled(ref: TaskRef): void {
    void this.#cancelUpstream(ref);
  }

  async #cancelUpstream(ref: TaskRef): Promise<void> {
    try {
      const record = await this.#store.get(ref);
      const args = record?.args as Partial<RelayArgs> | null | undefined;
      const mount = typeof args?.upstream === 'string' ? this.#mounts.get(args.upstream) : undefined;
      if (!record || record.status !== 'cancelled' || !mount) return;
      const step = (await this.#store.steps(ref, { results: true })).find((entry) => entry.name === UPSTREAM_TASK_STEP);
      const journaled = step?.result as Partial<JournaledUpstreamTask> | undefined;
      if (typeof journaled?.taskId === 'string') await this.#owe(ref.taskId, mount, { taskId: journaled.taskId, ...(typeof journaled.session === 'string' ? { session: journaled.session } : {}) }, record.owner.subject);
    } catch (error) {
      defaultLogger().error({ taskId: ref.taskId, err: logSafe(error instanceof Error ? error.message : error) }, 'cancelling the upstream task failed');
    }
  }

  /**
   * Records the cancel as owed and wakes the delivery: it is tried at once and again, from any
   * node, until the upstream acknowledges it. A ledger that cannot be written gets one direct try.
   */
  async #oweCancel(taskId: string, mount: UpstreamMount, task: Pick<UpstreamTask, 'taskId' | 'session'>, subject: string | undefined): Promise<void> {
    try {
      await this.#ledger.owe({
        taskId,
        upstream: mount.name,
        upstreamTaskId: task.taskId,
        ...(task.session === undefined ? {} : { session: task.session }),
        ...(subject === undefined ? {} : { subject }),
      });
    } catch (error) {
      defaultLogger().error({ upstream: mount.name, upstreamTaskId: task.taskId, err: logSafe(error instanceof Error ? error.message : error) }, 'the upstream cancel could not be recorded, trying it once');
      await mount.via(subject).client.cancelTask(task.taskId, task.session).catch(() => undefined);
      return;
    }
    this.#cancels.wake();
  }

  /** Stops fetching tool lists and delivering owed cancels in the background (cancels still owed stay in the ledger). */
  stop(): void {
    for (const warmUp of this.#warmUps) warmUp.stop();
    for (const mount of this.#mounts.values()) mount.stopWatching();
    void this.#cancels.stop();
  }
}
