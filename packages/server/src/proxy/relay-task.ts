import { defaultLogger, ErrorCode, JsonRpcError, logSafe, TaskCancelledError, type ElicitParams, type JsonObject, type SampleParams, type TaskContext, type TaskStore } from '@mcp-tasks/core';
import type { PendingRelays } from './pending-relays.js';
import type { UpstreamClient, UpstreamTask } from './upstream-client.js';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';
import type { UpstreamMount } from './upstream-mount.js';
import { WATCH_ABORTED, type UpstreamWatch } from './upstream-watch.js';
import type { OweUpstreamCancel } from './upstream-proxy.js';

/** What a relay task stores as its arguments: which upstream, which of its tools, with what. */
export interface RelayArgs extends JsonObject {
  readonly upstream: string;
  readonly tool: string;
  readonly arguments: JsonObject;
}

/** The journaled step that records the upstream task on the proxy's own task. */
export const UPSTREAM_TASK_STEP = 'upstream-task';

/** What the step journals: the upstream task, and the upstream session it belongs to (if any). */
export type JournaledUpstreamTask = JsonObject & {
  readonly upstream: string;
  readonly taskId: string;
  readonly session?: string;
};

/** How long the first run waits for its creating request's hand-over. */
const HAND_OFF_MS = 60_000;
/** Polls of an unreachable upstream before the relay gives up on it (with the poll interval between). */
const MAX_UNREACHABLE_POLLS = 30;
const DEFAULT_POLL_MS = 1_000;
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 30_000;

/** What {@link relayExecute} needs. */
export interface RelayDeps {
  readonly mounts: ReadonlyMap<string, UpstreamMount>;
  readonly pending: PendingRelays;
  /** The proxy's store: a relay aborted because its own task was cancelled cancels upstream, one handed over does not. */
  readonly store: TaskStore;
  /** Owes the upstream the cancel of a task nobody follows any more (delivered, retried, from any node). */
  readonly oweCancel: OweUpstreamCancel;
}

/**
 * The body of a proxied task, run (and, after the loss of its node, run again on another node) as
 * a resumable task: the first run journals the upstream task the creating request got; every run
 * then follows it, mirroring its status message, relaying its input requests (keys unchanged)
 * and forwarding the answers, until the upstream task ends, and ends the same way. A cancel of
 * the proxy's task cancels the upstream one.
 */
export function relayExecute(deps: RelayDeps) {
  return async (raw: unknown, ctx: TaskContext): Promise<JsonObject> => {
    const args = raw as RelayArgs;
    const mount = deps.mounts.get(args.upstream);
    if (!mount) throw new JsonRpcError(ErrorCode.InternalError, `Upstream ${args.upstream} is not mounted on this node`);
    let journaled: JournaledUpstreamTask;
    try {
      journaled = await ctx.step(UPSTREAM_TASK_STEP, async (): Promise<JournaledUpstreamTask> => {
        // Only the run on the node whose request reserved the task can learn the upstream task; a
        // later run finding the step unjournaled means that node was lost before it was recorded.
        if (ctx.attempt > 1 && !deps.pending.has(ctx.taskId)) {
          throw new UpstreamError(mount.name, 'the proxy node that called the upstream was lost before it recorded the upstream task');
        }
        const handOff = await deps.pending.handOff(ctx.taskId, HAND_OFF_MS);
        if (handOff.kind !== 'task') throw new TaskCancelledError();
        return { upstream: mount.name, taskId: handOff.task.taskId, ...(handOff.task.session === undefined ? {} : { session: handOff.task.session }) };
      });
    } catch (error) {
      deps.pending.journal(ctx.taskId, false);
      throw error;
    }
    deps.pending.journal(ctx.taskId, true);
    try {
      return await follow(mount, journaled, ctx, deps);
    } catch (error) {
      // The relay gives up (the upstream answers garbage, asks what cannot be relayed, stays
      // unreachable): the upstream task is not left running for nobody.
      if (error instanceof UpstreamError || error instanceof UpstreamRpcError || error instanceof RelayInputError) await owe(deps, ctx, mount, journaled);
      throw error instanceof RelayInputError ? error.cause : error;
    }
  };
}

/** An input request the relay could not put to the proxy's client: the task fails with its error. */
class RelayInputError extends Error {
  constructor(override readonly cause: unknown) {
    super('relaying an input request failed');
  }
}

/** Owes the upstream the cancel of the journaled task (the upstream may be the reason the relay gave up: it is retried). */
async function owe(deps: RelayDeps, ctx: TaskContext, mount: UpstreamMount, upstream: JournaledUpstreamTask): Promise<void> {
  await deps.oweCancel(ctx.taskId, mount, upstream, ctx.owner.subject).catch((error: unknown) => {
    defaultLogger().error({ upstream: mount.name, upstreamTaskId: upstream.taskId, err: logSafe(error instanceof Error ? error.message : error) }, 'cancelling an upstream task failed');
  });
}

async function follow(mount: UpstreamMount, upstream: JournaledUpstreamTask, ctx: TaskContext, deps: RelayDeps): Promise<JsonObject> {
  // As the owner upstream that made the task (the caller's own identity when callers are apart there).
  const { client, watch } = mount.via(ctx.owner.subject);
  const { taskId: upstreamTaskId } = upstream;
  const relayed = new Set<string>();
  let lastMessage: string | undefined;
  let unreachable = 0;
  let inputFailure: RelayInputError | undefined;
  const wake = new AbortController();
  let pollMs = DEFAULT_POLL_MS;
  try {
    for (;;) {
      const state = await nextState(mount, watch, upstream, pollMs, ctx, wake.signal, unreachable);
      if (ctx.signal.aborted) return await stop(mount, upstream, ctx, deps);
      if (inputFailure) throw inputFailure;
      if (state.kind === 'aborted') continue;
      if (state.kind === 'busy') {
        pollMs = Math.max(pollMs, state.retryAfterMs);
        continue;
      }
      if (state.kind === 'failed') {
        unreachable += 1;
        continue;
      }
      unreachable = 0;
      const task = state.task;
      if (task === undefined) throw new UpstreamError(mount.name, `its task ${upstreamTaskId} expired or no longer exists`);
      pollMs = clampPoll(task.pollIntervalMs);
      if (task.statusMessage !== undefined && task.statusMessage !== lastMessage) {
        lastMessage = task.statusMessage;
        await ctx.progress(0, undefined, task.statusMessage);
      }
      switch (task.status) {
        case 'completed':
          if (!task.result) throw new UpstreamError(mount.name, `its task ${upstreamTaskId} completed without a result`);
          return task.result;
        case 'failed': {
          const error = task.error ?? { code: ErrorCode.InternalError, message: `Upstream ${mount.name}: its task failed without an error` };
          throw new JsonRpcError(error.code, error.message, error['data'] as never);
        }
        case 'cancelled':
          if (ctx.signal.aborted) return stop(mount, upstream, ctx, deps);
          throw new UpstreamError(mount.name, `its task ${upstreamTaskId} was cancelled upstream`);
        case 'input_required':
          for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
            if (relayed.has(key)) continue;
            relayed.add(key);
            void relayInput(client, mount.name, upstream, key, request, ctx).catch((error: unknown) => {
              if (error instanceof ForwardFailed) return relayed.delete(key);
              inputFailure ??= new RelayInputError(error);
              wake.abort();
            });
          }
          break;
        case 'working':
          break;
      }
    }
  } finally {
    watch.forget(upstreamTaskId);
  }
}

type NextState = { readonly kind: 'task'; readonly task: UpstreamTask | undefined } | { readonly kind: 'busy'; readonly retryAfterMs: number } | { readonly kind: 'failed' } | { readonly kind: 'aborted' };

/**
 * The upstream task's next state, from the node's watch of the upstream (its listen stream, or a
 * poll once `pollMs` passed). A busy upstream is alive: every relay of this node leaves it alone
 * for as long as it asks, and that is no failure. Unreachable, or an error answer: both may pass,
 * so both are retried, up to {@link MAX_UNREACHABLE_POLLS} in a row.
 */
async function nextState(mount: UpstreamMount, watch: UpstreamWatch, upstream: JournaledUpstreamTask, pollMs: number, ctx: TaskContext, wake: AbortSignal, unreachable: number): Promise<NextState> {
  try {
    const outcome = await watch.next(upstream.taskId, upstream.session, pollMs, AbortSignal.any([ctx.signal, wake]));
    return outcome === WATCH_ABORTED ? { kind: 'aborted' } : { kind: 'task', task: outcome };
  } catch (error) {
    if (error instanceof UpstreamError && error.busy) {
      mount.pacer.busy(error.retryAfterMs!);
      return { kind: 'busy', retryAfterMs: error.retryAfterMs! };
    }
    const retryable = (error instanceof UpstreamError && error.retryable) || error instanceof UpstreamRpcError;
    if (!retryable || unreachable + 1 >= MAX_UNREACHABLE_POLLS) throw error;
    return { kind: 'failed' };
  }
}

/**
 * Asks the proxy's client under the upstream's key and forwards the first answer upstream. An
 * input request the client cannot be asked (a method the proxy does not relay, a capability the
 * caller did not declare, params the protocol does not define) rejects; so does a failed forward
 * ({@link ForwardFailed}).
 */
async function relayInput(client: UpstreamClient, name: string, upstream: JournaledUpstreamTask, key: string, request: JsonObject, ctx: TaskContext): Promise<void> {
  const params = (request['params'] ?? {}) as JsonObject;
  let answer: JsonObject;
  switch (request['method']) {
    case 'elicitation/create':
      answer = await ctx.elicit(key, params as unknown as ElicitParams);
      break;
    case 'sampling/createMessage':
      answer = await ctx.sample(key, params as unknown as SampleParams);
      break;
    case 'roots/list':
      answer = await ctx.roots(key);
      break;
    default:
      throw new UpstreamError(name, `asked for input the proxy cannot relay (${String(request['method'])})`);
  }
  // A wait that ended because the task was cancelled answers nothing upstream: the cancel does.
  if (ctx.signal.aborted) return;
  try {
    await client.updateTask(upstream.taskId, { [key]: answer }, upstream.session);
  } catch (error) {
    defaultLogger().error({ upstream: name, inputKey: logSafe(key), taskId: ctx.taskId, err: logSafe(error instanceof Error ? error.message : error) }, 'forwarding an input upstream failed, retrying');
    throw new ForwardFailed();
  }
}

/** A forward of an answer upstream failed: the next poll that still sees the key asks again (its first answer, at once) and forwards it again. */
class ForwardFailed extends Error {}

/**
 * The run was aborted: when the proxy's task was cancelled, the upstream one is cancelled too; a
 * run handed over (drain) or superseded leaves it to the run that follows.
 */
async function stop(mount: UpstreamMount, upstream: JournaledUpstreamTask, ctx: TaskContext, deps: RelayDeps): Promise<never> {
  const own = await deps.store.get({ taskId: ctx.taskId, owner: ctx.owner }).catch(() => undefined);
  if (own?.status === 'cancelled') await owe(deps, ctx, mount, upstream);
  throw new TaskCancelledError();
}

function clampPoll(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.round(ms)));
}
