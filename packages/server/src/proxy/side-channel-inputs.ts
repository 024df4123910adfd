import { createHash } from 'node:crypto';
import type { JsonObject } from '@mcp-tasks/core';

/** The `_meta` key a 2025-11-25 server ties a request to its task with. */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';
/** Requests held per process (unanswered, of live upstream tasks); beyond it the oldest is refused. */
const MAX_HELD = 1_000;

interface Waiter {
  resolve(answer: JsonObject): void;
  reject(error: Error): void;
}

interface Held {
  readonly upstreamTaskId: string;
  readonly request: JsonObject;
  /** One per time the upstream asked (a new stream asks again): each gets the answer, which the upstream takes once. */
  readonly waiters: Waiter[];
}

/**
 * Input a 2025-11-25 upstream asks for over a task's `tasks/result` stream: server-to-client
 * requests (`elicitation/create`, `sampling/createMessage`, `roots/list`) tied to the task by
 * related-task `_meta`. Each is held here, under a key derived from the upstream's request id
 * (stable when the upstream asks again under the same id on a new stream, as after a relay
 * takeover; the upstream's ids never reach the proxy's client as they are), until the relay
 * forwards the first answer, which the SDK client then posts upstream as the request's response.
 */
export class SideChannelInputs {
  readonly #held = new Map<string, Held>();

  /** The upstream task a side-channel request belongs to, or `undefined` when it names none. */
  static taskOf(params: unknown): string | undefined {
    const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
    const related = meta?.[RELATED_TASK_META_KEY] as { taskId?: unknown } | undefined;
    return typeof related?.taskId === 'string' ? related.taskId : undefined;
  }

  /** Holds `request` (method and params) of `upstreamTaskId` until it is answered; resolves with the answer. */
  hold(upstreamTaskId: string, requestId: string | number, request: JsonObject): Promise<JsonObject> {
    const key = inputKey(upstreamTaskId, requestId);
    return new Promise<JsonObject>((resolve, reject) => {
      const held = this.#held.get(key);
      if (held?.upstreamTaskId === upstreamTaskId) return held.waiters.push({ resolve, reject });
      this.#held.set(key, { upstreamTaskId, request, waiters: [{ resolve, reject }] });
      if (this.#held.size > MAX_HELD) {
        const [oldest, dropped] = this.#held.entries().next().value as [string, Held];
        this.#held.delete(oldest);
        for (const waiter of dropped.waiters) waiter.reject(new Error('too many input requests held'));
      }
    });
  }

  /** The outstanding requests of `upstreamTaskId`, by key (`{ method, params }`, the related-task `_meta` dropped). */
  outstanding(upstreamTaskId: string): Record<string, JsonObject> {
    const requests: Record<string, JsonObject> = {};
    for (const [key, held] of this.#held) {
      if (held.upstreamTaskId === upstreamTaskId) requests[key] = held.request;
    }
    return requests;
  }

  /** Answers held requests of `upstreamTaskId` by key; unknown keys are ignored (another node holds them, or they were answered). */
  answer(upstreamTaskId: string, answers: JsonObject): void {
    for (const [key, answer] of Object.entries(answers)) {
      const held = this.#held.get(key);
      if (!held || held.upstreamTaskId !== upstreamTaskId) continue;
      this.#held.delete(key);
      for (const waiter of held.waiters) waiter.resolve(answer as JsonObject);
    }
  }

  /** Drops the requests of an upstream task that ended: nobody will answer them. */
  drop(upstreamTaskId: string): void {
    for (const [key, held] of this.#held) {
      if (held.upstreamTaskId !== upstreamTaskId) continue;
      this.#held.delete(key);
      for (const waiter of held.waiters) waiter.reject(new Error('the upstream task ended'));
    }
  }
}

function inputKey(upstreamTaskId: string, requestId: string | number): string {
  return `upstream-${createHash('sha256').update(`${upstreamTaskId}\u0000${typeof requestId}:${String(requestId)}`).digest('base64url').slice(0, 22)}`;
}
