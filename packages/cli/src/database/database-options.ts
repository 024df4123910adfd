import { UsageError } from '../command-errors.js';

/**
 * How a command reaches PostgreSQL, from `--database-url`, `DIRECT_DATABASE_URL` or `DATABASE_URL`
 * and `--connect-timeout`. The direct URL comes first: behind a transaction pooler it is the one
 * that reaches PostgreSQL itself, which migrations (DDL under a lock) are best run on.
 */
export interface DatabaseOptions {
  /** The URL as given, or undefined when neither the flag nor the variable is set. */
  readonly url: string | undefined;
  /** Where the URL came from, for messages. */
  readonly source: '--database-url' | 'DIRECT_DATABASE_URL' | 'DATABASE_URL';
  readonly connectTimeoutMs: number;
}

export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;

/** Reads the connection settings; the flag wins over the environment. */
export function databaseOptions(flag: string | undefined, env: NodeJS.ProcessEnv, timeout: string | undefined): DatabaseOptions {
  const seconds = timeout === undefined ? DEFAULT_CONNECT_TIMEOUT_SECONDS : Number(timeout);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--connect-timeout must be a positive number of seconds (got ${JSON.stringify(timeout)})`);
  const direct = env['DIRECT_DATABASE_URL'] || undefined;
  const fromEnv = direct ?? (env['DATABASE_URL'] || undefined);
  return {
    url: flag ?? fromEnv,
    source: flag !== undefined ? '--database-url' : direct !== undefined ? 'DIRECT_DATABASE_URL' : 'DATABASE_URL',
    connectTimeoutMs: Math.round(seconds * 1000),
  };
}

/**
 * The URL, checked before any connection: a PostgreSQL URL (`postgres://` or `postgresql://`)
 * with a host. Messages never repeat the URL, which may carry a password.
 */
export function requireDatabaseUrl(options: DatabaseOptions): URL {
  if (options.url === undefined) throw new UsageError('no database: pass --database-url or set DATABASE_URL');
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new UsageError(`${options.source} is not a valid URL; expected postgres://user[:password]@host[:port]/database`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new UsageError(`${options.source} must start with postgres:// or postgresql:// (got ${url.protocol}//)`);
  }
  if (url.hostname === '') throw new UsageError(`${options.source} names no host; expected postgres://user[:password]@host[:port]/database`);
  return url;
}
