import { isWellFormedTaskId, JsonRpcError, ownerKey, type TaskOwner, type TaskRecord, type TaskRuntime } from '@mcp-tasks/core';
import { parsedBodyOf } from '../exchange/parsed-body.js';
import type { AuthInfo, Implementation, McpHandlerRequestOptions, McpHttpHandler, RequestId } from '@modelcontextprotocol/server';
import { insufficientScopeResponse } from '../access/insufficient-scope-response.js';
import { lacksScopes } from '../access/task-scopes.js';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { Admission } from '../limits/admission.js';
import { toWebResponse } from '../exchange/direct-exchange.js';
import type { ListenStreamCaps, ReleaseSlot } from '../limits/listen-stream-caps.js';
import type { RequestLimits } from '../limits/request-limits.js';
import { classifyRequest } from '../exchange/classify-request.js';
import { contentLengthOf } from '../exchange/content-length.js';
import type { RefusalHold } from '../limits/refusal-hold.js';
import { readTaskListen, taskIdsOf, type TaskListenRequest } from './listen-request.js';
import { atTokenExpiry } from './token-expiry.js';
import { closeFrame, DEFAULT_KEEP_ALIVE_MS, KEEPALIVE_FRAME, notificationFrame, SSE_HEADERS, SseFrameReader } from './sse.js';
import { TaskFollower } from './task-follower.js';
import type { McpRequestTracer, StreamSpan } from '../telemetry/mcp-request-tracer.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** Options of {@link withTaskListen}. */
export interface TaskListenOptions {
  /** The runtime whose tasks are followed (`McpTasks.runtime`). */
  readonly runtime: TaskRuntime;
  /** The owner of a listen request's caller, resolved exactly as the `tasks/*` handlers resolve it. */
  ownerOf(authInfo: AuthInfo | undefined, request: Request): Promise<TaskOwner>;
  /** Interval of `: keepalive` comments. Default 15 s (the SDK's). */
  readonly keepAliveMs?: number;
  /**
   * Most distinct task ids one listen may name; a listen that names more is refused with -32602
   * naming the cap (its ids are resolved in one query, so this bounds that query). Default 100.
   */
  readonly maxTaskIds?: number;
  /** Stamped on the graceful-close result's `_meta` (`io.modelcontextprotocol/serverInfo`), as the SDK does. */
  readonly serverInfo?: Implementation;
  /** Errors that do not reach the client (a failed re-read, an SDK stream that broke). */
  readonly onerror?: (error: Error) => void;
  /**
   * The limits of `tasks/*`, `subscriptions/listen` (until its acknowledgement), POSTed answers and
   * task tool calls, checked before the SDK or the store sees the request; shared by every handler
   * of one `McpTasks`.
   */
  readonly limits?: RequestLimits;
  /** Whether `name` is a task tool of this handler (its calls meet the limits of task tool calls). */
  readonly isTaskTool?: (name: string) => boolean;
  /** Caps on open task listen streams, per authenticated owner and per node (shared by every handler of one `McpTasks`). */
  readonly streamCaps?: ListenStreamCaps;
  /** Paces the refusals of these limits (shared by every handler of one `McpTasks`). */
  readonly refusalHold?: RefusalHold;
  /** Spans of task listens, linked to the spans that created their tasks; none without it. */
  readonly tracer?: McpRequestTracer;
}

/**
 * An MCP HTTP handler that serves `notifications/tasks` on `subscriptions/listen` in front of the
 * SDK's handler, and is that handler for everything else.
 */
export interface TaskListenHandler extends McpHttpHandler {
  /** Ends every open task listen stream gracefully (final re-read, then the listen result). */
  endStreams(): Promise<void>;
  /** Open task listen streams. */
  readonly openStreams: number;
  /** Store follow subscriptions held by open streams (0 when nobody listens). */
  readonly following: number;
}

interface OpenStream {
  end(graceful: boolean): Promise<void>;
  followers(): number;
}

const MAX_TASK_IDS = 100;

/**
 * Puts the tasks part of `subscriptions/listen` in front of `handler`. The SDK's listen router
 * strips `params.notifications.taskIds` and its event bus carries only list-changed kinds, so a
 * listen that carries `taskIds` is served here:
 *
 * - without the tasks extension in the request's client capabilities: -32021 (HTTP 400);
 * - otherwise the SDK is given the same request without `taskIds` first, so its checks
 *   (protocol version, `Mcp-Method`, body) answer exactly as for any listen, and so it serves the
 *   standard kinds the request also asked for; its acknowledgement is extended with the agreed
 *   `taskIds` and its frames are passed through;
 * - more than `maxTaskIds` distinct ids: -32602 naming the cap; the ids are resolved in one query;
 * - a task id is agreed to when it is the caller's (full owner); unknown, foreign and expired ids
 *   are just left out; one of the caller's tasks whose scopes the token lacks refuses the listen
 *   with HTTP 403 `insufficient_scope` naming them, as `tasks/get` does;
 * - after the acknowledgement, each agreed task's current state is sent as `notifications/tasks`
 *   (its DetailedTask, as `tasks/get` returns it without `resultType`), then every new state;
 * - a terminal task is unfollowed after its last state; when every agreed task is terminal and
 *   no standard kind is served, the stream ends with the listen result (the graceful close);
 * - a client that goes away (abort, cancel) ends the stream and unfollows everything.
 *
 * Every other request (including listens without `taskIds`) goes to `handler` unchanged.
 */
export function withTaskListen(handler: McpHttpHandler, options: TaskListenOptions): TaskListenHandler {
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  const maxTaskIds = options.maxTaskIds ?? MAX_TASK_IDS;
  const onerror = (error: Error) => {
    try {
      options.onerror?.(error);
    } catch {
      // The error callback must not break a stream.
    }
  };
  const open = new Set<OpenStream>();
  const streams = new WeakSet<Response>();
  const admission = new Admission(options.limits, options.refusalHold);
  const refused = (request: Request, key: string, id: RequestId | null, error: JsonRpcError) =>
    admission.refuseResponse(key, contentLengthOf(request.headers.get('content-length')), id, error);

  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    if (request.method.toUpperCase() !== 'POST') return handler.fetch(request, requestOptions);
    const parsed = await parsedBodyOf(request, requestOptions);
    if (!parsed || parsed.tooDeep) return handler.fetch(request, requestOptions);
    const parsedBody = parsed.body;
    let owner: Promise<TaskOwner | undefined> | undefined;
    const ownerOnce = () =>
      (owner ??= options.ownerOf(requestOptions?.authInfo, request).catch((error: unknown) => {
        onerror(error instanceof Error ? error : new Error(String(error)));
        return undefined;
      }));
    const limited = options.limits ? classifyRequest(parsedBody) : undefined;
    let leave: ReleaseSlot = () => {};
    if (limited && options.limits && (limited.kind === 'task' || options.isTaskTool?.(limited.toolName!) === true)) {
      const owner = await ownerOnce();
      if (owner) {
        const admitted = await admission.admitRequest(limited, limited.kind, owner, requestOptions?.authInfo !== undefined, contentLengthOf(request.headers.get('content-length')));
        if (admitted.refused) return toWebResponse(await admitted.refused);
        leave = admitted.leave;
      }
    }
    try {
      // Until the response starts: a stream (a listen, a legacy tasks/result) is not counted once open.
      return await route(request, requestOptions, parsedBody, ownerOnce);
    } finally {
      leave();
    }
  }

  async function route(
    request: Request,
    requestOptions: McpHandlerRequestOptions | undefined,
    parsedBody: unknown,
    ownerOnce: () => Promise<TaskOwner | undefined>,
  ): Promise<Response> {
    const forward = { ...requestOptions, parsedBody };
    const listen = readTaskListen(parsedBody);
    if (!listen) return handler.fetch(request, forward);

    const span = options.tracer?.startStream({ method: 'subscriptions/listen', requestId: listen.id, meta: listen.meta, request });
    let streaming = false;
    try {
      const response = await routeListen(request, requestOptions, forward, listen, ownerOnce, span);
      // A stream served here ends its span when it ends; any other answer ends it now.
      streaming = streams.has(response);
      if (!streaming && span) await recordAnswer(span, response);
      return response;
    } finally {
      if (!streaming) span?.end();
    }
  }

  async function routeListen(
    request: Request,
    requestOptions: McpHandlerRequestOptions | undefined,
    forward: McpHandlerRequestOptions,
    listen: TaskListenRequest,
    ownerOnce: () => Promise<TaskOwner | undefined>,
    span: StreamSpan | undefined,
  ): Promise<Response> {
    const taskIds = taskIdsOf(listen);
    if (taskIds === undefined) {
      return Response.json(jsonRpcErrorBody(listen.id, { code: -32602, message: 'Invalid params: notifications.taskIds must be an array of strings' }));
    }
    if (taskIds.length > maxTaskIds) {
      return Response.json(
        jsonRpcErrorBody(listen.id, { code: -32602, message: `Invalid params: notifications.taskIds names ${taskIds.length} tasks; one listen may follow at most ${maxTaskIds}` }),
      );
    }
    // A stream slot is taken before anything else is done for it, and given back on every way out.
    const listenOwner = await ownerOnce();
    let release: ReleaseSlot = () => {};
    if (options.streamCaps) {
      try {
        release = options.streamCaps.admit(listenOwner && requestOptions?.authInfo !== undefined ? ownerKey(listenOwner) : undefined);
      } catch (error) {
        if (error instanceof JsonRpcError) return refused(request, listenOwner ? ownerKey(listenOwner) : '', listen.id, error);
        throw error;
      }
    }
    try {
      // The SDK serves the same listen without taskIds: its checks come first, and it serves the
      // standard kinds (acknowledging {} and closing at once when none was asked for).
      const sdkResponse = await handler.fetch(request, { ...forward, parsedBody: listen.withoutTaskIds });
      if (!listen.asksStandardKinds && (await isSdkSubscriptionLimit(sdkResponse))) {
        // The SDK's subscriptions are shared by every caller and a task-only listen needs none:
        // whoever holds them all cannot refuse it. Its checks before the limit passed.
        if (!declaresTasksExtension({ mcpReq: { envelope: listen.meta } })) {
          release();
          return missingExtensionResponse(listen);
        }
        return await serveStream(request, requestOptions?.authInfo, listenOwner, release, listen, taskIds, {}, undefined, span);
      }
      if (sdkResponse.status !== 200 || !(sdkResponse.headers.get('content-type') ?? '').startsWith('text/event-stream') || !sdkResponse.body) {
        release();
        return sdkResponse;
      }
      const sdk = new SseFrameReader(sdkResponse.body);
      if (!declaresTasksExtension({ mcpReq: { envelope: listen.meta } })) {
        sdk.cancel();
        release();
        return missingExtensionResponse(listen);
      }
      const ack = await sdk.next();
      const honored = ackNotifications(ack?.message);
      if (honored === undefined) {
        // Not the SDK's listen stream as we know it: leave it to the SDK.
        sdk.cancel();
        release();
        onerror(new Error('subscriptions/listen: the SDK stream did not start with an acknowledgement'));
        return handler.fetch(request, forward);
      }
      const sdkServes = Object.keys(honored).length > 0;
      if (!sdkServes) sdk.cancel();
      return await serveStream(request, requestOptions?.authInfo, listenOwner, release, listen, taskIds, honored, sdkServes ? sdk : undefined, span);
    } catch (error) {
      release();
      throw error;
    }
  }

  async function serveStream(
    request: Request,
    authInfo: AuthInfo | undefined,
    owner: TaskOwner | undefined,
    release: ReleaseSlot,
    listen: TaskListenRequest,
    taskIds: readonly string[],
    honored: Record<string, unknown>,
    sdk: SseFrameReader | undefined,
    span: StreamSpan | undefined,
  ): Promise<Response> {
    const subscriptionId: RequestId = listen.id;
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let closed = false;
    let started = false;
    const pending: string[] = [];
    const write = (frame: string) => {
      if (closed) return;
      if (!started) {
        pending.push(frame);
        return;
      }
      try {
        controller.enqueue(encoder.encode(frame));
      } catch (error) {
        onerror(error instanceof Error ? error : new Error(String(error)));
      }
    };

    const followers: TaskFollower[] = [];
    let keepAlive: NodeJS.Timeout | undefined;
    const stream: OpenStream = {
      followers: () => followers.filter((f) => f.following).length,
      async end(graceful) {
        if (closed) return;
        if (graceful) {
          // A last look, so states written just before the end (a drain failing tasks) still go out.
          await Promise.race([Promise.all(followers.map((f) => f.flush())), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
          if (closed) return;
          write(closeFrame(subscriptionId, options.serverInfo));
        }
        teardown();
        // Until the reader took the last frames (bounded), so a host closing its sockets next does not cut them off.
        for (let waited = 0; graceful && (controller?.desiredSize ?? 0) < 0 && waited < 1_000; waited += 10) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
    };
    const teardown = () => {
      if (closed) return;
      closed = true;
      release();
      span?.end();
      cancelExpiry();
      for (const follower of followers) follower.stop();
      if (keepAlive) clearInterval(keepAlive);
      request.signal.removeEventListener('abort', onAbort);
      sdk?.cancel();
      open.delete(stream);
      try {
        controller?.close();
      } catch {
        // Already closed or cancelled.
      }
    };
    const onAbort = () => teardown();
    request.signal.addEventListener('abort', onAbort, { once: true });
    open.add(stream);
    // The stream ends, as a drain ends it, when the token it was opened with expires.
    const cancelExpiry = atTokenExpiry(authInfo, () => void stream.end(true));

    const allEnded = () => followers.every((f) => f.ended);
    const onEnd = () => {
      if (!sdk && allEnded()) void stream.end(true);
    };

    // Follow first, then read (TaskFollower.followMany): nothing that changes after the read is missed.
    const agreed: string[] = [];
    if (owner) {
      // One query for all the ids, however many (up to the cap) and whoever's they are.
      let found: { follower: TaskFollower; record: TaskRecord }[] = [];
      try {
        found = await TaskFollower.followMany(options.runtime, owner, taskIds.filter(isWellFormedTaskId), () => ({
          onState: (task) => write(notificationFrame('notifications/tasks', { ...task }, subscriptionId)),
          onEnd,
          onError: onerror,
        }));
      } catch (error) {
        onerror(error instanceof Error ? error : new Error(String(error)));
      }
      // The caller's own task without the token's scopes refuses the listen, as tasks/get does;
      // foreign tasks were never found, so the refusal tells nobody else anything.
      const needed = [...new Set(found.flatMap(({ record }) => (lacksScopes(record.scopes, authInfo) ? record.scopes : [])))];
      if (needed.length > 0) {
        for (const { follower } of found) follower.stop();
        teardown();
        return insufficientScopeResponse(needed, authInfo);
      }
      for (const { record } of found) span?.linkTask(record);
      for (const { follower } of found) {
        if (closed) {
          follower.stop();
          continue;
        }
        followers.push(follower);
        agreed.push(follower.ref.taskId);
      }
      // The client may have gone while the follows were under way.
      if (closed) for (const follower of followers) follower.stop();
    }

    const readable = new ReadableStream<Uint8Array>({
      start(streamController) {
        controller = streamController;
        started = true;
        if (closed) {
          streamController.close();
          return;
        }
        write(notificationFrame('notifications/subscriptions/acknowledged', { notifications: { ...honored, taskIds: agreed } }, subscriptionId));
        for (const frame of pending.splice(0)) write(frame);
        if (followers.length === 0 && !sdk) {
          void stream.end(true);
          return;
        }
        for (const follower of followers) follower.start();
        keepAlive = setInterval(() => write(KEEPALIVE_FRAME), Math.max(1, keepAliveMs));
        keepAlive.unref();
        if (sdk) void pipeSdk(sdk);
      },
      cancel() {
        teardown();
      },
    }, { highWaterMark: 0 });

    async function pipeSdk(reader: SseFrameReader): Promise<void> {
      try {
        for (;;) {
          const frame = await reader.next();
          if (!frame) break;
          if (!frame.message) continue; // its keepalives: this stream sends its own
          if (frame.message['id'] === subscriptionId && ('result' in frame.message || 'error' in frame.message)) break;
          write(`${frame.raw}\n\n`);
        }
      } catch (error) {
        if (!closed) onerror(error instanceof Error ? error : new Error(String(error)));
      }
      // The SDK ended its part (its handler closed): the server is going away; end gracefully.
      if (!closed) await stream.end(true);
    }

    const response = new Response(readable, { status: 200, headers: SSE_HEADERS });
    streams.add(response);
    return response;
  }

  const endStreams = async () => {
    await Promise.all([...open].map((stream) => stream.end(true)));
  };

  return {
    fetch,
    notify: handler.notify,
    bus: handler.bus,
    endStreams,
    async close() {
      await endStreams();
      await handler.close();
    },
    get openStreams() {
      return open.size;
    },
    get following() {
      let count = 0;
      for (const stream of open) count += stream.followers();
      return count;
    },
  };
}

function missingExtensionResponse(listen: TaskListenRequest): Response {
  const error = missingTasksCapability('subscriptions/listen with notifications.taskIds');
  return Response.json(jsonRpcErrorBody(listen.id, error), { status: 400 });
}

/** The JSON-RPC error of a listen answered without a stream, on its span. */
async function recordAnswer(span: StreamSpan, response: Response): Promise<void> {
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) return;
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown; message?: unknown } };
    const code = body.error?.code;
    if (typeof code === 'number') span.fail(code, typeof body.error?.message === 'string' ? body.error.message : '');
  } catch {
    // Not JSON after all: nothing to record.
  }
}

/** Whether `response` is the SDK's refusal of a listen because all its subscriptions are taken. */
async function isSdkSubscriptionLimit(response: Response): Promise<boolean> {
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) return false;
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown; message?: unknown } };
    return body.error?.code === -32603 && body.error.message === 'Subscription limit reached';
  } catch {
    return false;
  }
}

/** The `notifications` of the SDK's acknowledgement for this subscription, or undefined when `message` is not it. */
function ackNotifications(message: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (message?.['method'] !== 'notifications/subscriptions/acknowledged') return undefined;
  const params = message['params'];
  if (typeof params !== 'object' || params === null) return undefined;
  const notifications = (params as { notifications?: unknown }).notifications;
  return typeof notifications === 'object' && notifications !== null ? { ...(notifications as Record<string, unknown>) } : {};
}
