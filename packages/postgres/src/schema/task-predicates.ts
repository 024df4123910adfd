import type { RunClaim } from '@mcp-tasks/core';
import { sql, type RawBuilder } from 'kysely';

// Fragments every statement shares, so "visible" and "live" mean one thing everywhere.

/** The row belongs to `ownerKey` and has not expired (by the database clock). */
export function visibleTo(ownerKey: string): RawBuilder<boolean> {
  return sql<boolean>`owner_key = ${ownerKey} AND (expires_at IS NULL OR expires_at > now())`;
}

/** The row can still change: the compare-and-set guard of every write. */
export const isLive: RawBuilder<boolean> = sql<boolean>`status IN ('working', 'input_required')`;

/**
 * The new `last_updated_at`: the database's now, truncated to what a JavaScript Date holds, and
 * never earlier than the previous value.
 */
export const touchedAt: RawBuilder<Date> = sql<Date>`greatest(date_trunc('milliseconds', now()), last_updated_at)`;

/**
 * The row is held by `claim` (no claim: any holder): its node and its attempt, so a superseded run
 * (the task was claimed again since) is refused. The one place a run's fencing is written.
 */
export function heldBy(claim: RunClaim | undefined): RawBuilder<boolean> {
  return claim === undefined ? sql<boolean>`true` : sql<boolean>`(node_id = ${claim.nodeId} AND attempt = ${claim.attempt}::int)`;
}

/**
 * The row is claimable: `working`, unexpired, and held by no run (core's `isClaimable`). A task
 * waiting for input with no run is not: it becomes `working` when answered.
 */
export const isClaimable: RawBuilder<boolean> = sql<boolean>`node_id IS NULL AND status = 'working' AND (expires_at IS NULL OR expires_at > now())`;
