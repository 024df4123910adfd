import os from 'node:os';
import { withClient } from './database.js';

/** Where the figures were measured. */
export interface Environment {
  readonly date: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly loadAverage: readonly number[];
  readonly node: string;
  readonly postgres: string;
  readonly settings: Readonly<Record<string, string>>;
  readonly server: string;
  readonly command: string;
}

const SETTINGS = ['shared_buffers', 'synchronous_commit', 'fsync', 'max_connections', 'wal_level', 'full_page_writes'] as const;

export async function describeEnvironment(databaseUrl: string): Promise<Environment> {
  const { postgres, settings } = await withClient(databaseUrl, async (client) => {
    const version = await client.query<{ version: string }>('SELECT version()');
    const settings: Record<string, string> = {};
    for (const name of SETTINGS) settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
    return { postgres: version.rows[0]!.version, settings };
  });
  return {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
    node: process.version,
    postgres,
    settings,
    server: process.env['BENCH_SERVER_SOURCE'] ?? 'BENCH_SERVER_URL',
    command: process.env['BENCH_COMMAND'] ?? `node --conditions=@mcp-tasks/source --import tsx bench/run.ts ${process.argv.slice(2).join(' ')}`,
  };
}
