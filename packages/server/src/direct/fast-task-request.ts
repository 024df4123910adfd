import { isWellFormedTaskId } from '@mcp-tasks/core';
import { classifyInboundRequest, isJsonContentType, type RequestId } from '@modelcontextprotocol/server';
import type { DirectRequest } from './direct-exchange.js';

/** The project's own methods the direct path serves. */
export type FastTaskMethod = 'tasks/get' | 'tasks/update' | 'tasks/cancel';

const FAST_METHODS: ReadonlySet<string> = new Set<FastTaskMethod>(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** The protocol revision the direct path serves; every other one goes to the SDK. */
export const FAST_PROTOCOL_VERSION = '2026-07-28';

/** The `_meta` keys the SDK lifts out of a 2026-07-28 request into `ctx.mcpReq.envelope`. */
const ENVELOPE_KEYS = [
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
  'io.modelcontextprotocol/logLevel',
] as const;

/** A `tasks/*` request the direct path may serve, with what the SDK would hand its handler. */
export interface FastTaskRequest {
  readonly id: RequestId;
  readonly method: FastTaskMethod;
  readonly taskId: string;
  /** `params` as the handler sees them (the SDK lifts the envelope and the retry fields out). */
  readonly params: Record<string, unknown>;
  /** `params._meta` without the envelope keys (`undefined` when nothing is left). */
  readonly meta: Record<string, unknown> | undefined;
  readonly envelope: Record<string, unknown>;
  /** The bare answers of `inputResponses` (present when the request carried the field). */
  readonly inputResponses?: Record<string, unknown>;
  /** Keys of `inputResponses` whose value is not a bare result object. */
  readonly droppedInputResponseKeys?: readonly string[];
}

/**
 * The request, when it is one the direct path answers exactly as the SDK would: a POST with a
 * JSON content type, one JSON-RPC request for `tasks/get|update|cancel` whose envelope the SDK's
 * own classifier accepts as 2026-07-28, the `MCP-Protocol-Version` and `Mcp-Method` headers
 * present, and `Mcp-Name` equal to a well-formed `params.taskId`. Anything else (a bad or missing
 * header, another revision, a malformed id or body) is `undefined`: the SDK answers it, so every
 * refusal keeps the SDK's words.
 */
export function readFastTaskRequest(request: DirectRequest): FastTaskRequest | undefined {
  if (request.method !== 'POST') return undefined;
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (typeof message.method !== 'string' || !FAST_METHODS.has(message.method)) return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  const params = message.params;
  if (!isPlainObject(params)) return undefined;
  const taskId = params['taskId'];
  if (typeof taskId !== 'string' || !isWellFormedTaskId(taskId)) return undefined;
  if ('inputResponses' in params && !isPlainObject(params['inputResponses'])) return undefined;
  if (!isJsonContentType(request.header('content-type') ?? null)) return undefined;
  const protocolVersionHeader = request.header('mcp-protocol-version');
  const mcpMethodHeader = request.header('mcp-method');
  const mcpNameHeader = request.header('mcp-name');
  if (protocolVersionHeader === undefined || mcpMethodHeader === undefined || mcpNameHeader === undefined) return undefined;
  // A Base64 sentinel or any other spelling is the SDK's to decode or refuse.
  if (stripOws(mcpNameHeader) !== taskId) return undefined;
  const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader, mcpMethodHeader, mcpNameHeader, body });
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== FAST_PROTOCOL_VERSION) return undefined;
  if (stripOws(protocolVersionHeader) !== FAST_PROTOCOL_VERSION) return undefined;

  const rawMeta = params['_meta'];
  if (!isPlainObject(rawMeta)) return undefined;
  const envelope: Record<string, unknown> = {};
  const meta: Record<string, unknown> = { ...rawMeta };
  for (const key of ENVELOPE_KEYS) {
    if (!(key in rawMeta)) continue;
    envelope[key] = rawMeta[key];
    delete meta[key];
  }
  const handlerParams: Record<string, unknown> = { ...params };
  if (Object.keys(meta).length > 0) handlerParams['_meta'] = meta;
  else delete handlerParams['_meta'];
  delete handlerParams['inputResponses'];
  delete handlerParams['requestState'];
  const fast: FastTaskRequest = {
    id: message.id,
    method: message.method as FastTaskMethod,
    taskId,
    params: handlerParams,
    meta: Object.keys(meta).length > 0 ? meta : undefined,
    envelope,
  };
  if (!('inputResponses' in params)) return fast;
  const { accepted, dropped } = partitionInputResponses(params['inputResponses'] as Record<string, unknown>);
  return { ...fast, inputResponses: accepted, ...(dropped.length > 0 ? { droppedInputResponseKeys: dropped } : {}) };
}

/** As the SDK splits `inputResponses`: bare result objects are answers, anything else (a `{method, result}` wrapper) is dropped by key. */
function partitionInputResponses(inputResponses: Record<string, unknown>): { accepted: Record<string, unknown>; dropped: string[] } {
  const accepted: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, entry] of Object.entries(inputResponses)) {
    if (!isPlainObject(entry) || 'method' in entry || 'result' in entry) dropped.push(key);
    else accepted[key] = entry;
  }
  return { accepted, dropped };
}

/** RFC 9110 optional whitespace (SP, HTAB) trimmed, as the SDK compares header values. */
function stripOws(value: string): string {
  return value.replace(/^[\t ]+|[\t ]+$/g, '');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
