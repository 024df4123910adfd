import type { AdmissionOptions, InFlightOptions, OriginPolicy, RateLimitOptions, RefusalHoldOptions } from '@mcp-tasks/server';
import { authFromEnv, type DemoAuthConfig } from './auth/auth-config.js';
import { consoleFromEnv, type ConsoleConfig } from './console/console-config.js';
import { originPolicyFromEnv } from './http/origin-policy-env.js';
import { admissionFromEnv } from './limits/admission-env.js';
import { inFlightFromEnv } from './limits/in-flight-env.js';
import { rateLimitFromEnv } from './limits/rate-limit-env.js';
import { refusalHoldFromEnv } from './limits/refusal-hold-env.js';
import { storedBytesFromEnv, type StoredBytesBounds } from './limits/stored-bytes-env.js';

/** The demo's settings, from the environment (see DESIGN.md, "The demo server contract"). */
export interface DemoConfig {
  readonly port: number;
  readonly host: string;
  /** The Host and Origin headers served (`MCP_TASKS_ALLOWED_HOSTS`, `MCP_TASKS_ALLOWED_ORIGINS`); others get 403 before any route. Absent: the defaults for `host`. */
  readonly originPolicy?: OriginPolicy | undefined;
  readonly databaseUrl: string | undefined;
  /** A direct connection for LISTEN, the lease, the leader's locks and migrations when `DATABASE_URL` goes through a pooler (`DIRECT_DATABASE_URL`). */
  readonly directDatabaseUrl?: string | undefined;
  /** Connections of the store's pool (`MCP_TASKS_POOL_SIZE`); default the library's 10. */
  readonly poolSize?: number | undefined;
  readonly nodeId: string | undefined;
  readonly pollIntervalMs: number | undefined;
  readonly ttlMs: number | undefined;
  readonly maxPerPrincipal: number | undefined;
  /** What tasks keep until they expire, per authenticated owner and for all callers without a subject (`MCP_TASKS_MAX_STORED_BYTES`: `perOwner[,withoutSubject]` or `off`); absent: the library's defaults. */
  readonly storedBytes?: StoredBytesBounds | undefined;
  /** Runs this node executes at once (`MCP_TASKS_MAX_RUNS`); the rest wait for a node with room. Default: no limit. */
  readonly maxRuns?: number | undefined;
  /** The node lease (`MCP_TASKS_LEASE_MS`, with a database); default 30 000. */
  readonly leaseMs?: number | undefined;
  /** How long an aborted run may take to return before its run slot is given back (`MCP_TASKS_ABORT_GRACE_MS`); default 5 000. */
  readonly abortGraceMs?: number | undefined;
  /** How long a SIGTERM waits for running tasks before failing them (`MCP_TASKS_DRAIN_MS`); default 10 000. */
  readonly drainMs?: number | undefined;
  /** Apply pending migrations at start (`MCP_TASKS_MIGRATE`: `false` when a one-shot `mcp-tasks migrate` ran them); default true. */
  readonly migrate?: boolean | undefined;
  /** Bearer-token authorization (`MCP_TASKS_TOKENS`, or `MCP_TASKS_JWT_ISSUER`…); absent: none. */
  readonly auth?: DemoAuthConfig | undefined;
  /** The bearer token `GET /metrics` needs (`MCP_TASKS_METRICS_TOKEN`); absent: `/metrics` is open. */
  readonly metricsToken?: string | undefined;
  /** Per-owner rate limit of task operations (`MCP_TASKS_RATE_LIMIT`: `perSecond[,burst]` or `off`); absent: the library's default. */
  readonly rateLimit?: RateLimitOptions | false | undefined;
  /** Per-owner cap on task operations under way at once (`MCP_TASKS_MAX_IN_FLIGHT`: a positive integer or `off`); absent: the library's default. */
  readonly inFlight?: InFlightOptions | false | undefined;
  /** The node's admission control (`MCP_TASKS_ADMISSION`: `maxConcurrent[,maxQueue[,maxWaitMs]]` or `off`); absent: the library's default. */
  readonly admission?: AdmissionOptions | false | undefined;
  /** How long a refusal of those limits past an owner's prompt share is held (`MCP_TASKS_REFUSAL_HOLD_MS`: milliseconds or `off`); absent: the library's default. */
  readonly refusalHold?: RefusalHoldOptions | false | undefined;
  /** The operator console at `/console` (`MCP_TASKS_CONSOLE_TOKEN`; needs `DATABASE_URL`); absent: off. */
  readonly console?: ConsoleConfig | undefined;
  /** How often the maintenance leader counts the cluster's tasks (`MCP_TASKS_CLUSTER_STATS_MS`); default 15 000. */
  readonly clusterStatsMs?: number | undefined;
  /**
   * How often the leader counts the finished tasks kept until their TTL, a scan of the history
   * (`MCP_TASKS_CLUSTER_FINISHED_STATS_MS`, `off` for never); default 300 000.
   */
  readonly clusterFinishedStatsMs?: number | false | undefined;
  /**
   * An upstream MCP server whose tools are also served, as `upstream_<name>` (`MCP_TASKS_UPSTREAM_URL`,
   * `MCP_TASKS_UPSTREAM_TOKEN`, `MCP_TASKS_UPSTREAM_REVISION`: `2026-07-28`, the default, or `2025-11-25`;
   * `MCP_TASKS_UPSTREAM_MAX_TASKS` and `MCP_TASKS_UPSTREAM_RESERVED`: what the node may hold of it, shared between callers;
   * `MCP_TASKS_UPSTREAM_RATE`: its requests a second for this node, half of which its relays may use;
   * `MCP_TASKS_UPSTREAM_IDENTITY`: whose identity the upstream sees, `gateway` (default), `caller` (the
   * caller's bearer token passed through) or a JSON object of the callers' own upstream tokens by subject).
   */
  readonly upstream?:
    | {
        readonly url: string;
        readonly token?: string | undefined;
        readonly revision?: '2026-07-28' | '2025-11-25' | undefined;
        readonly capacity?: { readonly maxTasks: number; readonly reservedForNewCallers?: number } | undefined;
        readonly rate?: { readonly requestsPerSecond: number } | undefined;
        readonly identity?: 'gateway' | 'caller' | { readonly tokens: Readonly<Record<string, string>> } | undefined;
      }
    | undefined;
}

export function configFromEnv(env: NodeJS.ProcessEnv): DemoConfig {
  const host = env['HOST'] || '127.0.0.1';
  return {
    port: integer(env, 'PORT', 0) ?? 3000,
    host,
    originPolicy: originPolicyFromEnv(env, host),
    databaseUrl: env['DATABASE_URL'] || undefined,
    directDatabaseUrl: env['DIRECT_DATABASE_URL'] || undefined,
    poolSize: integer(env, 'MCP_TASKS_POOL_SIZE', 1),
    nodeId: env['NODE_ID'] || undefined,
    pollIntervalMs: integer(env, 'MCP_TASKS_POLL_INTERVAL_MS', 1),
    ttlMs: integer(env, 'MCP_TASKS_TTL_MS', 1),
    maxPerPrincipal: env['MCP_TASKS_MAX_PER_PRINCIPAL'] === 'Infinity' ? Infinity : integer(env, 'MCP_TASKS_MAX_PER_PRINCIPAL', 1),
    storedBytes: storedBytesFromEnv(env['MCP_TASKS_MAX_STORED_BYTES']),
    maxRuns: integer(env, 'MCP_TASKS_MAX_RUNS', 1),
    auth: authFromEnv(env),
    leaseMs: integer(env, 'MCP_TASKS_LEASE_MS', 100),
    abortGraceMs: integer(env, 'MCP_TASKS_ABORT_GRACE_MS', 0),
    drainMs: integer(env, 'MCP_TASKS_DRAIN_MS', 0),
    migrate: boolean(env, 'MCP_TASKS_MIGRATE'),
    metricsToken: env['MCP_TASKS_METRICS_TOKEN'] || undefined,
    rateLimit: rateLimitFromEnv(env['MCP_TASKS_RATE_LIMIT']),
    inFlight: inFlightFromEnv(env['MCP_TASKS_MAX_IN_FLIGHT']),
    admission: admissionFromEnv(env['MCP_TASKS_ADMISSION']),
    refusalHold: refusalHoldFromEnv(env['MCP_TASKS_REFUSAL_HOLD_MS']),
    console: consoleFromEnv(env),
    clusterStatsMs: integer(env, 'MCP_TASKS_CLUSTER_STATS_MS', 100),
    clusterFinishedStatsMs: env['MCP_TASKS_CLUSTER_FINISHED_STATS_MS'] === 'off' ? false : integer(env, 'MCP_TASKS_CLUSTER_FINISHED_STATS_MS', 1_000),
    upstream: env['MCP_TASKS_UPSTREAM_URL']
      ? { url: env['MCP_TASKS_UPSTREAM_URL'], token: env['MCP_TASKS_UPSTREAM_TOKEN'] || undefined, revision: upstreamRevision(env['MCP_TASKS_UPSTREAM_REVISION']), capacity: upstreamCapacityFromEnv(env), rate: upstreamRateFromEnv(env), identity: upstreamIdentityFromEnv(env['MCP_TASKS_UPSTREAM_IDENTITY']) }
      : undefined,
  };
}

function upstreamCapacityFromEnv(env: NodeJS.ProcessEnv): { maxTasks: number; reservedForNewCallers?: number } | undefined {
  const maxTasks = integer(env, 'MCP_TASKS_UPSTREAM_MAX_TASKS', 1);
  const reserved = integer(env, 'MCP_TASKS_UPSTREAM_RESERVED', 0);
  if (maxTasks === undefined) return undefined;
  return { maxTasks, ...(reserved === undefined ? {} : { reservedForNewCallers: reserved }) };
}

function upstreamRateFromEnv(env: NodeJS.ProcessEnv): { requestsPerSecond: number } | undefined {
  const requestsPerSecond = integer(env, 'MCP_TASKS_UPSTREAM_RATE', 1);
  return requestsPerSecond === undefined ? undefined : { requestsPerSecond };
}

function upstreamIdentityFromEnv(raw: string | undefined): 'gateway' | 'caller' | { tokens: Record<string, string> } | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'gateway' || raw === 'caller') return raw;
  let tokens: unknown;
  try {
    tokens = JSON.parse(raw);
  } catch {
    tokens = undefined;
  }
  if (typeof tokens !== 'object' || tokens === null || Array.isArray(tokens) || !Object.values(tokens).every((token) => typeof token === 'string')) {
    throw new Error('MCP_TASKS_UPSTREAM_IDENTITY must be gateway, caller, or a JSON object of upstream tokens by subject');
  }
  return { tokens: tokens as Record<string, string> };
}

function upstreamRevision(raw: string | undefined): '2026-07-28' | '2025-11-25' | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === '2026-07-28' || raw === '2025-11-25') return raw;
  throw new Error(`MCP_TASKS_UPSTREAM_REVISION must be 2026-07-28 or 2025-11-25, got ${JSON.stringify(raw)}`);
}

function boolean(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`${name} must be true or false, got ${JSON.stringify(raw)}`);
}

function integer(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}
