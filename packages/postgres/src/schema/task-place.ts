import { expiryOfTaskId } from '@mcp-tasks/core';
import { sql, type RawBuilder } from 'kysely';

const HOUR_MS = 3_600_000;

/**
 * The `expiry_key` range a task's row is looked for in, besides the unbounded partition
 * (`'infinity'`, where every task without an hour of its own is): a statement that reads or
 * writes a task by id bounds its scan by it, so PostgreSQL prunes the scan to the hourly
 * partition its id names instead of probing every partition's key.
 */
export interface TaskPlace {
  /** The range's first instant, in ms since the epoch; `-Infinity` for every hour, `Infinity` for none. */
  readonly from: number;
  /** The first instant after the range; `Infinity` when it is open. */
  readonly to: number;
  /** Whether the range is narrower than every hour: a look that finds nothing there looks everywhere. */
  readonly narrowed: boolean;
}

/** Every hour: an id that names none (older ids, an operator's retry), or the second look. */
const EVERY_HOUR: TaskPlace = { from: -Infinity, to: Infinity, narrowed: false };

/** No hour: a task that never expires is only ever in the unbounded partition. */
const NO_HOUR: TaskPlace = { from: Infinity, to: Infinity, narrowed: true };

/** Where the row of `taskId` is looked for first. */
function placeOf(taskId: string): TaskPlace {
  const expiry = expiryOfTaskId(taskId);
  if (expiry === undefined) return EVERY_HOUR;
  if (expiry === null) return NO_HOUR;
  return { from: expiry.hourStartsAt, to: expiry.hourStartsAt + HOUR_MS, narrowed: true };
}

/**
 * The one range that holds every one of `places` (a batch's): from the earliest hour to the
 * latest. Hours between them that none names are scanned too; a batch is of tasks polled now,
 * whose hours lie close together, and one range keeps it one statement with one plan.
 */
function spanOf(places: readonly TaskPlace[]): TaskPlace {
  let [from, to] = [Infinity, -Infinity];
  for (const place of places) {
    if (!place.narrowed) return EVERY_HOUR;
    if (place.from === Infinity) continue;
    from = Math.min(from, place.from);
    to = Math.max(to, place.to);
  }
  return to === -Infinity ? NO_HOUR : { from, to, narrowed: true };
}

/** An instant as `timestamptz` text, the infinities included. */
function timestampText(ms: number): string {
  return ms === Infinity ? 'infinity' : ms === -Infinity ? '-infinity' : new Date(ms).toISOString();
}

/**
 * The row's `expiry_key` (or `key`, a joined table's qualified column) is in `place` or is
 * `'infinity'`. Written as one lower bound and an OR, not as the place's range OR `'infinity'`:
 * PostgreSQL prunes either form to the two partitions, but this one probes each of them once, as
 * an index condition on `(id, expiry_key)` with the OR as a filter; the other is a BitmapOr of two
 * probes of each partition.
 *
 * The bounds are sent as text and cast by the database, a stable cast: the planner prunes by
 * immutable values only, so a plan is not pruned at planning, and the executor prunes by the
 * cast's value as it starts, before it opens the partitions it skips. As typed parameters, a
 * custom plan would be pruned at planning and cost less than the prepared statement's generic
 * plan, so PostgreSQL would plan every execution anew (a sixth of the reads per second); as
 * scalar subqueries the executor would open every partition and prune only as it runs (no faster
 * than probing them all). docs/scale-out.md has the figures.
 */
export function inPlace(place: TaskPlace, key: RawBuilder<unknown> = sql.ref('expiry_key')): RawBuilder<boolean> {
  const [from, to] = [sql`${timestampText(place.from)}::text::timestamptz`, sql`${timestampText(place.to)}::text::timestamptz`];
  return sql<boolean>`(${key} >= ${from} AND (${key} < ${to} OR ${key} >= 'infinity'))`;
}

/**
 * Looks for a task (reads it, or writes it compare-and-set) where its id places it, then, if
 * `look` finds nothing there and the place was narrowed, everywhere: the id's hour is the node's
 * clock's, a moment before the database stamps the task's expiry with its own, so a task near an
 * hour's edge can be in the next hour's partition. A look never misses a task for its hint; a
 * task that is absent (or, for a write, whose compare-and-set fails) costs two statements. A write
 * may look twice because a first look that found nothing changed nothing.
 */
export async function lookInPlace<T>(taskId: string, look: (place: TaskPlace) => Promise<T | undefined>): Promise<T | undefined> {
  const place = placeOf(taskId);
  const found = await look(place);
  return found !== undefined || !place.narrowed ? found : look(EVERY_HOUR);
}

/**
 * {@link lookInPlace} for a batch, in one statement: `look` answers each of `items` by position,
 * first in the span of their ids' places; those it `missed` are looked for again everywhere, if
 * the span was narrowed, in a second statement of their own.
 */
export async function lookManyInPlace<I, T>(
  items: readonly I[],
  taskIdOf: (item: I) => string,
  look: (items: readonly I[], place: TaskPlace) => Promise<T[]>,
  missed: (result: T) => boolean,
): Promise<T[]> {
  const span = spanOf(items.map((item) => placeOf(taskIdOf(item))));
  const found = await look(items, span);
  const misses = span.narrowed ? found.flatMap((result, i) => (missed(result) ? [i] : [])) : [];
  if (misses.length === 0) return found;
  const again = await look(misses.map((i) => items[i]!), EVERY_HOUR);
  misses.forEach((i, k) => {
    found[i] = again[k]!;
  });
  return found;
}
