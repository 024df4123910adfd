import { expiryOfTaskId } from '@mcp-tasks/core';
import { sql, type RawBuilder } from 'kysely';

const HOUR_MS = 3_600_000;

/**
 * The `expiry_key` range a task's row is looked for in, besides the unbounded partition
 * (`'infinity'`, where every task without an hour of its own is): a statement that reads a task
 * by id bounds its scan by it, so PostgreSQL prunes the scan to the hourly partition its id names
 * instead of probing every partition's key.
 */
export interface TaskPlace {
  readonly from: string;
  readonly to: string;
  /** Whether the range is narrower than every hour: a read that finds nothing there looks everywhere. */
  readonly narrowed: boolean;
}

/** Every hour: an id that names none (older ids, an operator's retry), or the second look. */
const EVERY_HOUR: TaskPlace = { from: '-infinity', to: 'infinity', narrowed: false };

/** No hour: a task that never expires is only ever in the unbounded partition. */
const NO_HOUR: TaskPlace = { from: 'infinity', to: 'infinity', narrowed: true };

/** Where the row of `taskId` is looked for first. */
function placeOf(taskId: string): TaskPlace {
  const expiry = expiryOfTaskId(taskId);
  if (expiry === undefined) return EVERY_HOUR;
  if (expiry === null) return NO_HOUR;
  return { from: new Date(expiry.hourStartsAt).toISOString(), to: new Date(expiry.hourStartsAt + HOUR_MS).toISOString(), narrowed: true };
}

/**
 * The row's `expiry_key` is in `place` or is `'infinity'`. Written as one lower bound and an OR,
 * not as the place's range OR `'infinity'`: PostgreSQL prunes either form to the two partitions,
 * but this one probes each of them once, as an index condition on `(id, expiry_key)` with the OR
 * as a filter; the other is a BitmapOr of two probes of each partition.
 *
 * The bounds are sent as text and cast by the database, a stable cast: the planner prunes by
 * immutable values only, so a plan is not pruned at planning, and the executor prunes by the
 * cast's value as it starts, before it opens the partitions it skips. As typed parameters, a
 * custom plan would be pruned at planning and cost less than the prepared statement's generic
 * plan, so PostgreSQL would plan every execution anew (a sixth of the reads per second); as
 * scalar subqueries the executor would open every partition and prune only as it runs (no faster
 * than probing them all). docs/scale-out.md has the figures.
 */
export function inPlace(place: TaskPlace): RawBuilder<boolean> {
  const [from, to] = [sql`${place.from}::text::timestamptz`, sql`${place.to}::text::timestamptz`];
  return sql<boolean>`(expiry_key >= ${from} AND (expiry_key < ${to} OR expiry_key >= 'infinity'))`;
}

/**
 * Reads a task where its id places it, then, if it is not there and the place was narrowed,
 * everywhere: the id's hour is the node's clock's, a moment before the database stamps the
 * task's expiry with its own, so a task near an hour's edge can be in the next hour's partition.
 * A read never misses a task for its hint; a task that is absent costs two statements.
 */
export async function readInPlace<T>(taskId: string, read: (place: TaskPlace) => Promise<T | undefined>): Promise<T | undefined> {
  const place = placeOf(taskId);
  const found = await read(place);
  return found !== undefined || !place.narrowed ? found : read(EVERY_HOUR);
}
