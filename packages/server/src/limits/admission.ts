import { ownerKey, type JsonRpcError, type TaskOwner } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import { toWebResponse, type DirectResponse } from '../exchange/direct-exchange.js';
import type { ClassifiedRequest } from '../exchange/classify-request.js';
import { requestCost } from './request-cost.js';
import { limitNameOf, limitRefusal } from './limit-refusal.js';
import type { ReleaseSlot } from './listen-stream-caps.js';
import { heldRefusal, type RefusalHold } from './refusal-hold.js';
import type { LimitedCall, RequestLimits } from './request-limits.js';

/** The admission of one request: its slot to give back when it is answered, or the (held) refusal to answer instead. */
export type Admitted = { readonly leave: ReleaseSlot; readonly refused?: undefined } | { readonly refused: DirectResponse | Promise<DirectResponse> };

const NOTHING: ReleaseSlot = () => {};

/**
 * Admission, the one place a request meets this node's limits, on either lane: an owner's rate
 * and in-flight share, the node's admission control ({@link RequestLimits}), the caps of open
 * streams (their refusals), and the refusal hold that paces every refusal. A request is admitted
 * once; what it is refused is answered here, in one shape (HTTP 429/503, `Retry-After`).
 */
export class Admission {
  constructor(
    readonly limits: RequestLimits | undefined,
    readonly hold: RefusalHold | undefined,
  ) {}

  /** Whether any request limit is on (a request then needs its owner resolved before it is served). */
  get any(): boolean {
    return this.limits?.any === true;
  }

  /** Admits `call` of `kind` (waiting its turn if it must), or its refusal for request `id`. */
  async admit(call: LimitedCall, kind: 'task' | 'toolCall', id: RequestId | null, bodyBytes: number | undefined): Promise<Admitted> {
    if (!this.limits) return { leave: NOTHING };
    const admitted = await this.limits.admit(call, kind);
    return typeof admitted === 'function' ? { leave: admitted } : { refused: this.refuse(call.ownerKey, bodyBytes, id, admitted) };
  }

  /** Admits the classified `request` of `owner` as `kind` ({@link admit} of its {@link limitedCallOf}). */
  admitRequest(request: ClassifiedRequest, kind: 'task' | 'toolCall', owner: TaskOwner, authenticated: boolean, bodyBytes: number | undefined): Promise<Admitted> {
    return this.admit(limitedCallOf(request, ownerKey(owner), authenticated), kind, request.id, bodyBytes);
  }

  /** What {@link admitRequest} would refuse at once ({@link refuseNow}). */
  refuseRequestNow(request: ClassifiedRequest, owner: TaskOwner, authenticated: boolean, bodyBytes: number | undefined): DirectResponse | Promise<DirectResponse> | undefined {
    return this.refuseNow(limitedCallOf(request, ownerKey(owner), authenticated), request.id, bodyBytes);
  }

  /** What {@link admit} would refuse at once, without queueing (`undefined`: it would admit or queue, and nothing was taken). */
  refuseNow(call: LimitedCall, id: RequestId | null, bodyBytes: number | undefined): DirectResponse | Promise<DirectResponse> | undefined {
    const refusal = this.limits?.refusal(call);
    return refusal ? this.refuse(call.ownerKey, bodyBytes, id, refusal) : undefined;
  }

  /** The answer to a refusal of one of the limits (a stream cap's too), once the hold let it go. */
  refuse(ownerKey: string, bodyBytes: number | undefined, id: RequestId | null, error: JsonRpcError): DirectResponse | Promise<DirectResponse> {
    return heldRefusal(this.hold, ownerKey, bodyBytes, limitNameOf(error), limitRefusal(id, error));
  }

  /** {@link refuse} as a WHATWG `Response`, for the SDK lane. */
  async refuseResponse(ownerKey: string, bodyBytes: number | undefined, id: RequestId | null, error: JsonRpcError): Promise<Response> {
    return toWebResponse(await this.refuse(ownerKey, bodyBytes, id, error));
  }
}

/**
 * `request` of `ownerKey` as the limits see it. A listen may not wait for its owner's share: a
 * client that behaves opens a stream, not nine at once (see {@link LimitedCall.queue}).
 */
export function limitedCallOf(request: ClassifiedRequest, ownerKey: string, authenticated: boolean): LimitedCall {
  return { ownerKey, authenticated, taskId: request.taskId, queue: request.method !== 'subscriptions/listen', cost: requestCost(request.method, request.params) };
}
