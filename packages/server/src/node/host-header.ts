/**
 * A Host header as RFC 9110 allows it: a DNS name or IPv4 address, or a bracketed IPv6 address,
 * with an optional port. Anything else (spaces, slashes, a lone bracket, control characters) is a
 * bad request: the edge answers 400 before any route, and never builds a URL (or a
 * `WWW-Authenticate` challenge) from it.
 */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The Host header if it is one; `undefined` when it is absent or malformed. */
export function validHost(value: string | undefined): string | undefined {
  return value !== undefined && value.length <= 261 && HOST.test(value) ? value : undefined;
}
