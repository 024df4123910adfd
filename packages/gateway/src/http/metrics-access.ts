import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Whether a `/metrics` request may read the node's metrics: always without a token configured
 * (`MCP_TASKS_METRICS_TOKEN`), else only with `Authorization: Bearer <token>`. Compared as
 * digests in constant time, so neither the length nor a prefix of the token leaks.
 */
export function metricsAuthorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), digest(token));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
