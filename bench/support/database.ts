import pg from 'pg';
import { createScratchDatabase } from '../../test/support/database.js';

/** The run's own database on the benchmark server; `drop()` removes it. */
export interface BenchDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

export function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  return createScratchDatabase(serverUrl, 'mcp_tasks_bench');
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
