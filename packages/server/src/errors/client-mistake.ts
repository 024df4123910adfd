/**
 * What kind of client mistake an error the SDK reports through `onerror` is, or `undefined` when
 * it is the server's own: the SDK reports every request it refuses (a missing envelope, a wrong
 * `Accept`, a body that is not a JSON-RPC message…) as an `Error` with its stack, and any caller,
 * without a token on a node without authorization, can send them as fast as it likes. The kind
 * is short and fixed (never the client's value), for a metric attribute and a log line.
 */
export function clientMistakeKind(error: Error): string | undefined {
  const rejected = /^Rejected (?:inbound|2025-era) request[^(]*\(([a-z0-9-]{1,40})\)/.exec(error.message);
  if (rejected) return rejected[1];
  // A body the SDK parsed itself and found no JSON, or no JSON-RPC message.
  if (error.name === 'SyntaxError') return 'parse-error';
  if (error.name === 'ZodError' || error.name === '$ZodError') return 'invalid-message';
  for (const [prefix, kind] of PREFIXES) if (error.message.startsWith(prefix)) return kind;
  return undefined;
}

/** The SDK's transport refusals, by the sentence each starts with. */
const PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['Not Acceptable:', 'not-acceptable'],
  ['Unsupported Media Type:', 'unsupported-media-type'],
  ['Bad Request: Unsupported protocol version', 'protocol-version'],
  ['Bad Request:', 'bad-request'],
  ['Invalid Request:', 'invalid-request'],
  ['Parse error', 'parse-error'],
  ['Method not allowed', 'method-not-allowed'],
  ['Payload Too Large', 'payload-too-large'],
  ['Conflict:', 'conflict'],
  ['Session not found', 'session-not-found'],
  ['Invalid Host header', 'host'],
  ['Invalid Origin header', 'origin'],
  ['Invalid event ID', 'event-id'],
];
