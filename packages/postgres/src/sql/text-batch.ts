import { sql, type RawBuilder } from 'kysely';

/**
 * A batch's text column for `unnest`, bound as an array whose length the planner is not shown.
 * A prepared statement's custom plan sees a bound array's length and costs the batch by it: below
 * the ten rows a generic plan assumes, every custom plan looks cheaper, and PostgreSQL plans the
 * statement anew at every execution; beside kept rows, planning a join across partitions costs
 * more than running it (docs/scale-out.md, "Batched reads keep their generic plan"). Behind a
 * scalar subquery the length is unknown to both plans, and the generic plan is kept.
 */
export function textBatch(values: readonly (string | null)[]): RawBuilder<string[]> {
  return sql<string[]>`(SELECT ${values}::text[])`;
}
