import { ErrorCode, JsonRpcError, type LiveTaskCount } from '@mcp-tasks/core';

/** What the gateway, one owner upstream, may hold of an upstream, and how it is shared between the gateway's callers. */
export interface UpstreamCapacityOptions {
  /** Upstream tasks the gateway may hold at once (the upstream's quota for the gateway's credential). */
  readonly maxTasks: number;
  /** Of those, how many only a caller holding none may take. Default a tenth (at least 1). */
  readonly reservedForNewCallers?: number;
}

/** {@link UpstreamCapacityOptions}, checked and with its defaults. */
export interface UpstreamCapacity {
  readonly maxTasks: number;
  readonly reservedForNewCallers: number;
}

export function upstreamCapacity(name: string, options: UpstreamCapacityOptions): UpstreamCapacity {
  const { maxTasks } = options;
  if (!(Number.isSafeInteger(maxTasks) && maxTasks > 0)) throw new RangeError(`proxyUpstream(${name}): capacity.maxTasks must be a positive integer`);
  const reserved = options.reservedForNewCallers ?? Math.max(1, Math.ceil(maxTasks / 10));
  if (!(Number.isSafeInteger(reserved) && reserved >= 0 && reserved < maxTasks)) {
    throw new RangeError(`proxyUpstream(${name}): capacity.reservedForNewCallers must be an integer from 0 to maxTasks - 1`);
  }
  return { maxTasks, reservedForNewCallers: reserved };
}

/**
 * The fairness rule, on counts that include the task just reserved: never more than `maxTasks`
 * upstream tasks; a caller's first task may take any free slot, a caller holding some already may
 * take one only while `reservedForNewCallers` stay free after it. So no caller takes the last
 * upstream slot while another holds none.
 */
export function fitsShare(capacity: UpstreamCapacity, counts: LiveTaskCount): boolean {
  if (counts.total > capacity.maxTasks) return false;
  if (counts.owner <= 1) return true;
  return capacity.maxTasks - counts.total >= capacity.reservedForNewCallers;
}

/** A proxied task call refused for the upstream's capacity: -32600, saying which capacity and what the caller holds of it. */
export class UpstreamCapacityError extends JsonRpcError {
  constructor(upstream: string, capacity: UpstreamCapacity, counts: LiveTaskCount) {
    const held = counts.owner - 1;
    const others = counts.total - 1 - held;
    const why =
      counts.total > capacity.maxTasks
        ? `all ${capacity.maxTasks} upstream tasks this gateway may hold are taken`
        : `this caller holds ${held} of the ${capacity.maxTasks} upstream tasks this gateway may hold (other callers ${others}), and the last ${capacity.reservedForNewCallers} are kept for callers that hold none`;
    super(ErrorCode.InvalidRequest, `Upstream ${upstream} has no task slot for this call: ${why}; try again when one of them ends`, { upstream, maxTasks: capacity.maxTasks, held });
    this.name = 'UpstreamCapacityError';
  }
}
