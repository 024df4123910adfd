import { randomBytes } from 'node:crypto';

/**
 * Who a node process is: the configured `name` (`NODE_ID`, shared by a process and its
 * successors, and by mistake sometimes by two live processes) and a random `instanceId` of this
 * process alone. `nodeId`, the pair, is what the lease row, the tasks it runs and their run claims
 * record, so no two processes ever hold the same lease or pass each other's compare-and-set.
 */
export interface NodeIdentity {
  readonly name: string;
  readonly instanceId: string;
  readonly nodeId: string;
}

/** Longest configured name: the id adds the separator and the instance id. */
export const MAX_NODE_NAME_LENGTH = 256;

/** 64 random bits: unique among the processes of one cluster, and short enough for an application_name. */
const INSTANCE_ID_BYTES = 8;

/** A new identity for this process under `name`. */
export function newNodeIdentity(name: string): NodeIdentity {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NODE_NAME_LENGTH) {
    throw new RangeError(`the node name must be a non-empty string of at most ${MAX_NODE_NAME_LENGTH} characters`);
  }
  const instanceId = randomBytes(INSTANCE_ID_BYTES).toString('hex');
  return { name, instanceId, nodeId: `${name}/${instanceId}` };
}

/**
 * The application_name of one of this process's own connections (`role` says which), so operators
 * find it in pg_stat_activity and a namesake can tell whether this process still has one open.
 * PostgreSQL keeps 63 bytes of it; the role and the instance id fit well inside.
 */
export function instanceApplicationName(role: string, instanceId: string): string {
  return `${role}:${instanceId}`;
}
