import type { JsonRpcError } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import { toWebResponse, type DirectResponse } from '../exchange/direct-exchange.js';
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
