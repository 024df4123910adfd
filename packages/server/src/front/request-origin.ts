import { ErrorCode } from '@mcp-tasks/core';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/**
 * Which `Host` and `Origin` headers an endpoint serves (DNS rebinding protection). A page on
 * `attacker.example` whose name the attacker later points at 127.0.0.1 can make a browser send
 * requests to a server on the victim's loopback: they carry `Host: attacker.example:PORT` and
 * `Origin: http://attacker.example:PORT`, and a server without authorization would serve them.
 */
export interface OriginPolicy {
  /**
   * Host names (no port; IPv6 in brackets, `[::1]`) the `Host` header may name, compared without
   * case or port; `'any'` serves every well-formed one (a server behind a load balancer that
   * passes clients' names).
   */
  readonly allowedHosts: readonly string[] | 'any';
  /**
   * Origins a browser's request may come from besides the server's own: an origin
   * (`https://app.example:8443`, compared whole) or a host name (any scheme and port); `'any'`
   * lets every origin through. A request without `Origin` (every non-browser client) passes. An
   * origin whose host name is one of `allowedHosts` (a list) is allowed too.
   */
  readonly allowedOrigins: readonly string[] | 'any';
}

/** The loopback names a server bound to loopback serves by default. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Whether `address` (a listen address: `127.0.0.1`, `::1`, `localhost`) only accepts loopback connections. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(?:\.\d{1,3}){3}$/.test(bare);
}

/**
 * Why a request with these headers is refused under `policy`, in one sentence that repeats
 * neither value, or `undefined` when it may be served. The Origin is compared by host name
 * (port-agnostic, as the Host is): behind a TLS-terminating proxy the node sees http where the
 * browser says https, and a proxy may drop the port from `Host`.
 */
export function foreignRequest(host: string | undefined, origin: string | undefined, policy: OriginPolicy): string | undefined {
  const hostName = host === undefined ? undefined : hostNameOf(host);
  if (policy.allowedHosts !== 'any' && (hostName === undefined || !policy.allowedHosts.includes(hostName))) {
    return 'Forbidden: the Host header names a host this server does not serve';
  }
  if (origin === undefined || origin === '' || policy.allowedOrigins === 'any') return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'Forbidden: the Origin header is not an origin this server serves';
  }
  // The literal `null` origin (an opaque context) parses as no URL above; a URL's origin of `null` (a `file:` page) is no origin either.
  const originHost = url.hostname.toLowerCase();
  const allowed =
    (url.origin !== 'null' && originHost === hostName) ||
    policy.allowedOrigins.some((entry) => (entry.includes('://') ? entry === url.origin : entry === originHost)) ||
    (policy.allowedHosts !== 'any' && policy.allowedHosts.includes(originHost));
  return allowed && url.origin !== 'null' ? undefined : 'Forbidden: the Origin header is not an origin this server serves';
}

/** The host name of a Host header, lower-case and without its port (`[::1]:3000` is `[::1]`). */
function hostNameOf(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']');
    return end < 0 ? lower : lower.slice(0, end + 1);
  }
  const colon = lower.lastIndexOf(':');
  return colon < 0 ? lower : lower.slice(0, colon);
}

/** The 403 answer's body: a JSON-RPC error, as the SDK's own Host/Origin helpers answer. */
export function forbiddenBody(message: string): string {
  return JSON.stringify(jsonRpcErrorBody(null, { code: ErrorCode.ServerError, message }));
}

/**
 * A policy from configured lists: names lower-cased, a host given with a port or scheme refused
 * with a sentence naming it (a configuration mistake, not a client's).
 */
export function originPolicyOf(allowedHosts: readonly string[] | 'any', allowedOrigins: readonly string[] | 'any'): OriginPolicy {
  const hosts = allowedHosts === 'any' ? 'any' : allowedHosts.map((host) => host.trim().toLowerCase());
  if (hosts !== 'any') {
    for (const host of hosts) {
      if (!/^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])$/.test(host)) throw new TypeError(`allowed host ${JSON.stringify(host)} must be a host name without scheme or port (IPv6 in brackets)`);
    }
  }
  const origins =
    allowedOrigins === 'any'
      ? 'any'
      : allowedOrigins.map((entry) => {
          const trimmed = entry.trim().toLowerCase();
          if (!trimmed.includes('://')) return trimmed;
          if (!URL.canParse(trimmed) || new URL(trimmed).origin === 'null') throw new TypeError(`allowed origin ${JSON.stringify(entry)} must be an origin (scheme://host[:port]) or a host name`);
          return new URL(trimmed).origin;
        });
  return { allowedHosts: hosts, allowedOrigins: origins };
}
