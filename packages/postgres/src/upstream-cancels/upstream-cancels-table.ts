import { sql, type Kysely, type RawBuilder } from 'kysely';

/** Where the owed upstream cancels are (migration 0009): the executor and `<schema>.upstream_cancels`. */
export interface UpstreamCancelsTable {
  readonly db: Kysely<any>;
  readonly table: RawBuilder<unknown>;
}

export function upstreamCancelsTable(db: Kysely<any>, schema: string): UpstreamCancelsTable {
  return { db, table: sql.id(schema, 'upstream_cancels') };
}
