import { randomUUID } from 'node:crypto';
import { defaultLogger, ErrorCode, JsonRpcError, logSafe, QuotaExceededError, RuntimeDrainingError, type JsonObject, type LiveTaskCount, type TaskRef } from '@mcp-tasks/core';
import { inputRequired, type CallToolResult, type InputRequiredResult, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';
import { clientCapabilitiesOf } from '../capability/client-capabilities.js';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import type { HandlerDeps } from '../handlers/handler-deps.js';
import { EXTENSION_REVISION, type TaskCallRevision } from '../handlers/tools-call.js';
import type { MountedTool } from './mounted-tool.js';
import type { PendingRelays } from './pending-relays.js';
import { unwrapUpstreamState, wrapUpstreamState } from './proxy-request-state.js';
import type { RelayArgs } from './relay-task.js';
import { upstreamTraceContext } from './trace-context.js';
import type { UpstreamCallOptions, UpstreamCallOutcome, UpstreamClient, UpstreamTask } from './upstream-client.js';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';
import type { UpstreamMount } from './upstream-mount.js';
import { fitsShare, UpstreamCapacityError } from './upstream-share.js';
import type { OweUpstreamCancel } from './upstream-proxy.js';

/** How long a request waits for its relay run to journal the upstream task before giving the task up. */
const JOURNAL_MS = 15_000;

/** What {@link proxiedToolsCall} needs besides the handler deps. */
export interface ProxiedCallDeps extends HandlerDeps {
  readonly pending: PendingRelays;
  readonly oweCancel: OweUpstreamCancel;
  readonly maxArgumentBytes: number;
  readonly execute: (args: unknown, ctx: never) => Promise<JsonObject>;
  /** Whether this server makes tasks at all (`McpTasks` option `tasks`). */
  readonly tasks: boolean;
  /** The client's revision of task calls (2025-11-25's `params.task`, or the extension's). Default: the extension's. */
  readonly revision?: TaskCallRevision;
}

/**
 * A `tools/call` of an upstream's tool. Arguments are checked against the upstream's schema
 * first. With the extension declared, the owner's slot is reserved (the proxy's own task row,
 * quota checked atomically) before the call goes upstream; the upstream then answers at once
 * (relayed inline, the reservation given up), asks for input on the request (relayed as this
 * proxy's `input_required`, the reservation given up), or makes a task, which the reserved task
 * mirrors from then on. Over quota (or draining) the call goes upstream without the extension, as
 * a local optional tool runs inline; an upstream that then insists on a task (-32021) is refused
 * with -32600, as a local required tool is.
 */
export async function proxiedToolsCall(deps: ProxiedCallDeps, mount: UpstreamMount, tool: MountedTool, request: JSONRPCRequest, ctx: ServerContext): Promise<Result> {
  const revision = deps.revision ?? EXTENSION_REVISION;
  const args = tool.parseArguments((request.params as { arguments?: unknown } | undefined)?.arguments, deps.maxArgumentBytes);
  const ttlMs = revision.ttlMs?.(request);
  const clientCapabilities = clientCapabilitiesOf(ctx);
  const upstreamCapabilities = (clientCapabilities as JsonObject | undefined) ?? revision.undeclaredCapabilities;
  const callerMeta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
  const base: UpstreamCallOptions = {
    tasks: false,
    ...(upstreamCapabilities === undefined ? {} : { clientCapabilities: upstreamCapabilities }),
    traceContext: upstreamTraceContext(callerMeta),
    ...retryOf(mount, ctx),
  };
  const owner = await deps.ownerOf(ctx);
  // Whose identity the upstream sees: the caller's own when callers stay apart there, else the gateway's.
  const via = mount.via(owner.subject, ctx.http?.authInfo?.token);
  if (!deps.tasks || !revision.wantsTask(request, ctx)) {
    let outcome: UpstreamCallOutcome;
    try {
      outcome = await via.client.callTool(tool.upstream.name, args, base);
    } catch (error) {
      // The upstream's tool runs only as a task: the error a local required tool gives this client's revision.
      if (error instanceof UpstreamRpcError && error.code === ErrorCode.MissingRequiredClientCapability) {
        throw deps.tasks ? revision.taskRequired({ name: tool.exposed }) : missingTasksCapability(`tool ${tool.exposed}`);
      }
      throw error;
    }
    // A task nobody asked for has nobody to follow it: it is not left running upstream.
    if (outcome.kind === 'task') await cancelUnfollowed(deps, mount, outcome.task, owner.subject);
    return relayInline(mount, outcome, tool, revision);
  }

  const relayArgs: RelayArgs = { upstream: mount.name, tool: tool.upstream.name, arguments: args };
  let reserved: TaskRef;
  let created: Result;
  try {
    const record = await deps.runtime.start({
      owner,
      tool: tool.exposed,
      args: relayArgs,
      resumable: true,
      authenticated: ctx.http?.authInfo !== undefined,
      // A new run of the relay would call the upstream's tool again, whose safety this side
      // cannot know: an operator retries such a task upstream, not here.
      retry: false,
      ...(clientCapabilities === undefined ? {} : { clientCapabilities }),
      ...(ttlMs === undefined ? {} : { ttlMs }),
      execute: deps.execute as never,
    });
    reserved = { taskId: record.taskId, owner };
    created = revision.created(record);
  } catch (error) {
    if (!(error instanceof QuotaExceededError || error instanceof RuntimeDrainingError)) throw error;
    return overQuota(deps, mount, via.client, owner.subject, tool, args, base, error, revision);
  }

  // A caller that is its own owner upstream meets the upstream's own limits, not a share of the gateway's.
  if (!via.own) await keepShare(deps, mount, reserved);

  let outcome: UpstreamCallOutcome;
  try {
    outcome = await via.client.callTool(tool.upstream.name, args, { ...base, tasks: true });
  } catch (error) {
    await giveUp(deps, reserved);
    // The upstream's own refusal of the task names the upstream, so that its "this owner" (the gateway) is not read as the caller.
    if (error instanceof UpstreamRpcError && error.code === ErrorCode.InvalidRequest) {
      mount.learnFromRefusal(error.code, error.message, error.data);
      throw new UpstreamRpcError(mount.name, error.code, `Upstream ${mount.name} refused the task: ${error.message}`, error.data);
    }
    throw error;
  }
  if (outcome.kind !== 'task') {
    await giveUp(deps, reserved);
    return relayInline(mount, outcome, tool, revision);
  }
  deps.pending.settle(reserved.taskId, { kind: 'task', task: outcome.task });
  if (!(await deps.pending.journaled(reserved.taskId, JOURNAL_MS))) {
    // The upstream made a task the proxy cannot keep (its row ended, or cannot be written): no
    // upstream task is left behind, and the call is refused.
    await deps.oweCancel(reserved.taskId, mount, outcome.task, owner.subject).catch(() => undefined);
    await deps.runtime.cancel(reserved).catch(() => undefined);
    throw new JsonRpcError(ErrorCode.InvalidRequest, `Upstream ${mount.name} made a task of ${tool.exposed} that this server could not keep; it was cancelled upstream`);
  }
  return created;
}

/**
 * The caller's fair share of the upstream's capacity, counted after the reservation (which the
 * counts include), so two calls racing for the last slot never both keep it: a reservation past
 * the share is given up and the call refused, saying so.
 */
async function keepShare(deps: ProxiedCallDeps, mount: UpstreamMount, reserved: TaskRef): Promise<void> {
  const capacity = mount.capacity;
  const store = deps.runtime.store;
  if (!capacity || !store.countLive) return;
  let counts: LiveTaskCount;
  try {
    counts = await store.countLive([...(await mount.tools()).keys()], reserved.owner);
  } catch (error) {
    await giveUp(deps, reserved);
    throw error;
  }
  if (fitsShare(capacity, counts)) return;
  await giveUp(deps, reserved);
  throw new UpstreamCapacityError(mount.name, capacity, counts);
}

/** Over quota: sent without the extension, so an optional upstream tool runs inline. */
async function overQuota(
  deps: ProxiedCallDeps,
  mount: UpstreamMount,
  client: UpstreamClient,
  subject: string,
  tool: MountedTool,
  args: JsonObject,
  base: UpstreamCallOptions,
  refusal: QuotaExceededError | RuntimeDrainingError,
  revision: TaskCallRevision,
): Promise<Result> {
  let outcome: UpstreamCallOutcome;
  try {
    outcome = await client.callTool(tool.upstream.name, args, base);
  } catch (error) {
    if (error instanceof UpstreamRpcError && error.code === ErrorCode.MissingRequiredClientCapability) {
      throw refusal instanceof QuotaExceededError ? refusal : new JsonRpcError(ErrorCode.InvalidRequest, refusal.message);
    }
    throw error;
  }
  if (outcome.kind === 'task') {
    // The upstream made a task although none was asked for: it cannot be kept within the quota.
    await cancelUnfollowed(deps, mount, outcome.task, subject);
    throw refusal instanceof QuotaExceededError ? refusal : new JsonRpcError(ErrorCode.InvalidRequest, refusal.message);
  }
  return relayInline(mount, outcome, tool, revision);
}

function relayInline(mount: UpstreamMount, outcome: UpstreamCallOutcome, tool: MountedTool, revision: TaskCallRevision): Result {
  if (outcome.kind === 'result') return outcome.result;
  if (outcome.kind === 'input_required') {
    // A revision without multi-round-trip input (2025-11-25) cannot answer input asked on the request.
    if (revision.inlineInputRequired) return requestInputRefused(mount, tool, outcome.inputRequests);
    return inputRequired({
      inputRequests: outcome.inputRequests as unknown as NonNullable<InputRequiredResult['inputRequests']>,
      requestState: wrapUpstreamState(mount.name, outcome.requestState),
    });
  }
  throw new UpstreamError(mount.name, `made a task of ${tool.exposed} that was not asked for`);
}

/** The upstream asked, on the request, for input this client's revision cannot answer there: said as a tool error, as that revision reports failures. */
function requestInputRefused(mount: UpstreamMount, tool: MountedTool, inputRequests: unknown): CallToolResult {
  const keys = Object.keys((inputRequests ?? {}) as object).join(', ');
  return {
    content: [{ type: 'text', text: `Upstream ${mount.name} asks for input${keys ? ` (${keys})` : ''} before it runs ${tool.exposed}, on the request itself, which a 2025-11-25 client cannot answer` }],
    isError: true,
  };
}

/** The retry's answers and the upstream's state of the previous round, when this is a retry. */
function retryOf(mount: UpstreamMount, ctx: ServerContext): Pick<UpstreamCallOptions, 'inputResponses' | 'requestState'> {
  const inputResponses = ctx.mcpReq.inputResponses;
  const state = unwrapUpstreamState(mount.name, ctx.mcpReq.requestState());
  return {
    ...(inputResponses && Object.keys(inputResponses).length > 0 ? { inputResponses: inputResponses as JsonObject } : {}),
    ...(state === undefined ? {} : { requestState: state }),
  };
}

/** Ends a reservation the upstream did not make a task for: its run stops before calling anything. */
async function giveUp(deps: ProxiedCallDeps, reserved: TaskRef): Promise<void> {
  await deps.runtime.cancel(reserved).catch((error: unknown) => defaultLogger().error({ taskId: reserved.taskId, err: logSafe(error) }, 'giving up a reserved task failed'));
  deps.pending.settle(reserved.taskId, { kind: 'none' });
}

/** An upstream task no task of ours mirrors: owed a cancel under a key of its own (each such task is owed once). */
async function cancelUnfollowed(deps: ProxiedCallDeps, mount: UpstreamMount, task: UpstreamTask, subject: string): Promise<void> {
  await deps.oweCancel(`unfollowed:${mount.name}:${task.taskId}:${randomUUID()}`, mount, task, subject).catch((error: unknown) => {
    defaultLogger().error({ upstream: mount.name, upstreamTaskId: task.taskId, err: logSafe(error instanceof Error ? error.message : error) }, 'cancelling an upstream task failed');
  });
}
