import type { TaskOwner } from '@mcp-tasks/core';
import type { OwnerResolver } from '../access/owner-resolver.js';
import { requestOwnerOnce } from '../access/request-owner.js';
import { bodyBytesOf, type DirectRequest, type DirectResponse } from '../exchange/direct-exchange.js';
import type { Admission } from '../limits/admission.js';
import { classifyRequest, type ClassifiedRequest } from '../exchange/classify-request.js';
import type { DirectServe } from './front-door.js';

/** Serves one classified request of the fast lane (a row of the method table), given its owner resolved once; `undefined` leaves it to the next step. */
export type FastMethodServer = (request: DirectRequest, classified: ClassifiedRequest, owner: () => Promise<TaskOwner | undefined>) => Promise<DirectResponse | undefined>;

/** What {@link fastLane} needs: the owner's resolution, admission, and its ways through the method table. */
export interface FastLaneOptions {
  readonly resolveOwner: OwnerResolver;
  /** The server part of the owners (the McpServer's name). */
  readonly serverName: string;
  readonly admission: Admission;
  /** The `tasks/*` rows of the method table (`direct/task-request-server.ts`). */
  readonly tasks: FastMethodServer;
  /** The `tools/call` row, when the handler has task tools of its own and no upstream routes calls first. */
  readonly toolCalls: FastMethodServer | undefined;
}

/**
 * The fast lane, one way through the pipeline after the front door's checks: the request is
 * classified once ({@link classifyRequest}, kept with the body for the SDK lane), its owner
 * resolved at most once, and its row of the method table served; a request no row serves here,
 * but which admission refuses at once (a listen over its rate, a 2025-11-25 `tasks/*` past its
 * in-flight share), is answered with that refusal, as the SDK lane's listen edge would answer it,
 * without building a WHATWG `Request` (a flood of refusals is mostly that cost). Anything else is
 * `undefined`, untaken: the SDK lane admits and serves it.
 */
export function fastLane(options: FastLaneOptions): DirectServe {
  const { resolveOwner, serverName, admission, tasks, toolCalls } = options;
  return async (request) => {
    const classified = classifyRequest(request.body);
    if (!classified) return undefined;
    const owner = requestOwnerOnce(resolveOwner, serverName, request);
    const served = classified.kind === 'toolCall' ? await toolCalls?.(request, classified, owner) : await tasks(request, classified, owner);
    if (served) return served;
    // A tools/call the lane declined meets the limits on the SDK lane only if it names a task tool.
    if (!admission.any || classified.kind !== 'task') return undefined;
    const resolved = await owner();
    if (resolved === undefined) return undefined;
    return admission.refuseRequestNow(classified, resolved, request.authInfo !== undefined, bodyBytesOf(request));
  };
}
