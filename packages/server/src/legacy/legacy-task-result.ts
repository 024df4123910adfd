import { ErrorCode, isTerminal, JsonRpcError, LimitReachedError, logSafe, outstandingInputs, ownerKey, type TaskRecord, type TaskRef } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import { readTaskId } from '../handlers/read-task-id.js';
import { Admission } from '../limits/admission.js';
import type { ReleaseSlot } from '../limits/listen-stream-caps.js';
import { contentLengthOf } from '../exchange/content-length.js';
import { KEEPALIVE_FRAME, messageFrame, SSE_HEADERS } from '../listen/sse.js';
import { atTokenExpiry } from '../listen/token-expiry.js';
import { inputRequestId } from './input-request-id.js';
import { ownedTask, type LegacyCall, type LegacyTasksDeps } from './legacy-deps.js';
import { errorObjectOf } from './legacy-json-rpc.js';
import { RELATED_TASK_META_KEY, toLegacyTask } from './legacy-task.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** An open `tasks/result` stream, as the edge ends them at drain and close. */
export interface ResultStream {
  end(): void;
}

const SHUTTING_DOWN = new JsonRpcError(ErrorCode.InternalError, 'The server is shutting down: call tasks/result again');
const TOKEN_EXPIRED = new JsonRpcError(ErrorCode.ServerError, 'The token this stream was opened with expired: call tasks/result again with a fresh token');

/**
 * 2025-11-25 `tasks/result`. A terminal task is answered at once with exactly what its
 * `tools/call` would have answered: the tool result (with the related-task `_meta`), or the
 * JSON-RPC error of a `failed` task; a `cancelled` one has no result (-32602 saying so).
 *
 * A live task gets an SSE stream that stays open until it ends. On it go, as that revision
 * delivers them: each outstanding input of the task as a server-to-client request (its id names
 * the task and key, see {@link inputRequestId}; `relatedTask` in its `_meta`), once per stream;
 * `notifications/tasks/status` at each status change; and the final answer. The stream carries
 * no event ids, so no client tries to resume it (resuming is a GET, which stateless serving
 * refuses): a client that lost it calls `tasks/result` again, on any node, and is asked again
 * whatever is still unanswered. Each open stream takes a slot of the `tasks/result` stream caps
 * (their own, so listens never take them; HTTP 429 past an owner's, 503 past the node's).
 * Changes are heard through the task's follow (NOTIFY across nodes), with the runtime's poll
 * interval as the backstop, and the row decides every frame. Like a task listen, the stream ends
 * when the token it was opened with expires (`authInfo.expiresAt`): with a -32000 error saying
 * so, and nothing of the task after it.
 */
export async function legacyTasksResult(deps: LegacyTasksDeps, call: LegacyCall, open: Set<ResultStream>): Promise<Response> {
  const owned = await ownedTask(deps, call, readTaskId('tasks/result', call.params));
  if (owned instanceof Response) return owned;
  if (isTerminal(owned.record.status)) return Response.json(finalMessage(call.id, owned.record));
  let release: ReleaseSlot = () => {};
  try {
    release = deps.streamCaps?.admit(call.authInfo === undefined ? undefined : ownerKey(owned.ref.owner)) ?? release;
  } catch (error) {
    if (error instanceof LimitReachedError) {
      const bytes = contentLengthOf(call.request.headers.get('content-length'));
      return new Admission(undefined, deps.refusalHold).refuseResponse(ownerKey(owned.ref.owner), bytes, call.id, error);
    }
    throw error;
  }
  return new Response(resultStream(deps, call, owned.ref, owned.record, open, release), { status: 200, headers: SSE_HEADERS });
}

function finalMessage(id: RequestId, record: TaskRecord): Record<string, unknown> {
  if (record.status === 'completed') {
    const result = record.result ?? { content: [] };
    const meta = (result['_meta'] as Record<string, unknown> | undefined) ?? {};
    return { jsonrpc: '2.0', id, result: { ...result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: record.taskId } } } };
  }
  if (record.status === 'failed') return { jsonrpc: '2.0', id, error: record.error ?? { code: ErrorCode.InternalError, message: 'Internal error' } };
  return jsonRpcErrorBody(id, { code: ErrorCode.InvalidParams, message: `Task ${record.taskId} was cancelled: it has no result` });
}

function resultStream(deps: LegacyTasksDeps, call: LegacyCall, ref: TaskRef, first: TaskRecord, open: Set<ResultStream>, release: ReleaseSlot): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let closed = false;
  let pulse = deferred();
  const wake = () => pulse.resolve();
  let unfollow: (() => void) | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  let cancelExpiry = () => {};
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const send = (frame: string) => {
    if (!closed) controller.enqueue(encoder.encode(frame));
  };
  const stream: ResultStream = {
    end: () => {
      send(messageFrame(jsonRpcErrorBody(call.id, SHUTTING_DOWN.toJSON())));
      finish();
    },
  };
  const finish = () => {
    if (closed) return;
    closed = true;
    open.delete(stream);
    release();
    clearInterval(keepAlive);
    cancelExpiry();
    unfollow?.();
    wake();
    try {
      controller.close();
    } catch {
      // Already closed by the reader going away.
    }
  };

  async function serve(): Promise<void> {
    open.add(stream);
    call.request.signal.addEventListener('abort', finish, { once: true });
    keepAlive = setInterval(() => send(KEEPALIVE_FRAME), deps.keepAliveMs);
    // The token's expiry ends the stream: no result or input request reaches a client past it.
    cancelExpiry = atTokenExpiry(call.authInfo, () => {
      send(messageFrame(jsonRpcErrorBody(call.id, TOKEN_EXPIRED.toJSON())));
      finish();
    });
    if (closed) return;
    try {
      unfollow = await deps.runtime.follow(ref, wake);
    } catch (error) {
      send(messageFrame(jsonRpcErrorBody(call.id, errorObjectOf(error))));
      return finish();
    }
    const asked = new Set<string>();
    let status = first.status;
    // Read again once followed: a change between the first read and the follow is not lost.
    let record: TaskRecord | undefined = await deps.runtime.store.get(ref).catch(() => first);
    while (!closed) {
      // Take the pulse before the read, so a change during the read is not missed.
      const changed = pulse.promise;
      if (record === undefined) {
        send(messageFrame(jsonRpcErrorBody(call.id, errorObjectOf(new JsonRpcError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found')))));
        return finish();
      }
      if (record.status !== status) {
        status = record.status;
        send(messageFrame({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: toLegacyTask(record) }));
      }
      if (isTerminal(record.status)) {
        send(messageFrame(finalMessage(call.id, record)));
        return finish();
      }
      for (const [key, request] of Object.entries(outstandingInputs(record))) {
        if (asked.has(key)) continue;
        asked.add(key);
        const params = request.params as Record<string, unknown>;
        const meta = (params['_meta'] as Record<string, unknown> | undefined) ?? {};
        send(
          messageFrame({
            jsonrpc: '2.0',
            id: inputRequestId({ taskId: ref.taskId, key }),
            method: request.method,
            params: { ...params, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: ref.taskId } } },
          }),
        );
      }
      await wakeOrDelay(changed, deps.runtime.pollIntervalMs);
      pulse = deferred();
      if (closed) return;
      try {
        record = await deps.runtime.store.get(ref);
      } catch (error) {
        // A failed read is no news: the next wake or poll reads again.
        deps.onerror(new Error(`tasks/result of ${ref.taskId}: reading the task failed: ${logSafe(error)}`));
      }
    }
  }

  return new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      void serve().catch((error: unknown) => {
        deps.onerror(error instanceof Error ? error : new Error(String(error)));
        finish();
      });
    },
    cancel() {
      finish();
    },
  });
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function wakeOrDelay(wake: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([wake, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
