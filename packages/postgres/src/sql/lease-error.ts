import { sql, type RawBuilder } from 'kysely';

/** Why a task was failed by the lease machinery (a JSON-RPC error, as `failed` requires). */
export type LeaseFailureReason = 'lease expired' | 'restarted';

/** The JSON-RPC code of lease failures: -32603 Internal error (the server side failed, not the call). */
export const LEASE_ERROR_CODE = -32603;

/** The message of a task failed because its node went away, for a node id in SQL. */
export function leaseErrorMessage(nodeId: RawBuilder<unknown>, reason: LeaseFailureReason): RawBuilder<string> {
  return sql<string>`'The server running this task stopped (node ' || ${nodeId} || ' ' || ${reason} || ')'`;
}

/** The message for a known node id (what clients read in `error.message`). */
export function leaseErrorText(nodeId: string, reason: LeaseFailureReason): string {
  return `The server running this task stopped (node ${nodeId} ${reason})`;
}
