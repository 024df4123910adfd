import { classifyInboundRequest, isJsonContentType, type RequestId } from '@modelcontextprotocol/server';
import type { DirectRequest } from '../exchange/direct-exchange.js';

/** The protocol revision the direct path serves; every other one goes to the SDK. */
export const FAST_PROTOCOL_VERSION = '2026-07-28';

/** The `_meta` keys the SDK lifts out of a 2026-07-28 request into `ctx.mcpReq.envelope`. */
const ENVELOPE_KEYS = [
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
  'io.modelcontextprotocol/logLevel',
] as const;

/** One 2026-07-28 JSON-RPC request as the SDK hands it to its handler. */
export interface ModernRequest {
  readonly id: RequestId;
  readonly method: string;
  /** `params` as the client sent them. */
  readonly rawParams: Record<string, unknown>;
  /** `params` as the handler sees them (the SDK lifts the envelope and the retry fields out). */
  readonly params: Record<string, unknown>;
  /** `params._meta` without the envelope keys (`undefined` when nothing is left). */
  readonly meta: Record<string, unknown> | undefined;
  readonly envelope: Record<string, unknown>;
}

/**
 * Picks the requests a direct path serves: given the method and the raw params, the value the
 * `Mcp-Name` header must carry (a task id, a tool name), or `undefined` to leave the request to
 * the SDK.
 */
export type NameOf = (method: string, params: Record<string, unknown>) => string | undefined;

/**
 * The request, when it is one the SDK would dispatch to a handler as a 2026-07-28 request: a
 * POST with a JSON content type, one JSON-RPC request that `nameOf` accepts, whose envelope the
 * SDK's own classifier accepts as 2026-07-28, with the `MCP-Protocol-Version` and `Mcp-Method`
 * headers present and `Mcp-Name` equal to what `nameOf` names. Anything else (a bad or missing
 * header, another revision, a malformed body) is `undefined`: the SDK answers it, so every
 * refusal keeps the SDK's words.
 */
export function readModernRequest(request: DirectRequest, nameOf: NameOf): ModernRequest | undefined {
  if (request.method !== 'POST') return undefined;
  const body = request.body;
  if (!isPlainObject(body)) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (typeof message.method !== 'string') return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  const params = message.params;
  if (!isPlainObject(params)) return undefined;
  const name = nameOf(message.method, params);
  if (name === undefined) return undefined;
  if (!isJsonContentType(request.header('content-type') ?? null)) return undefined;
  const protocolVersionHeader = request.header('mcp-protocol-version');
  const mcpMethodHeader = request.header('mcp-method');
  const mcpNameHeader = request.header('mcp-name');
  if (protocolVersionHeader === undefined || mcpMethodHeader === undefined || mcpNameHeader === undefined) return undefined;
  // A Base64 sentinel or any other spelling is the SDK's to decode or refuse.
  if (stripOws(mcpNameHeader) !== name) return undefined;
  if (!classifiesAsFastRevision(protocolVersionHeader, mcpMethodHeader, mcpNameHeader, message)) return undefined;
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
  return {
    id: message.id,
    method: message.method,
    rawParams: params,
    params: handlerParams,
    meta: Object.keys(meta).length > 0 ? meta : undefined,
    envelope,
  };
}

/** The top-level keys of a JSON-RPC request; a body with any other key is always classified afresh. */
const REQUEST_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const MAX_REMEMBERED_SHAPES = 256;
/** Whether the SDK classified a request of this shape as a 2026-07-28 request, by shape. */
const classifiedShapes = new Map<string, boolean>();

/**
 * The SDK's classifier ({@link classifyInboundRequest}) says the request is a 2026-07-28 request.
 * Its verdict depends on the two headers, the body's keys, `jsonrpc`, the kind of `id`, `method`
 * and `params._meta`, never on the other params or the id's value: so it is asked once per shape
 * (a poll repeats the same one) and its answer remembered, at most for a few hundred shapes.
 */
function classifiesAsFastRevision(protocolVersionHeader: string, mcpMethodHeader: string, mcpNameHeader: string, body: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown }): boolean {
  const classify = () => {
    const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader, mcpMethodHeader, mcpNameHeader, body });
    return route.kind === 'modern' && route.messageKind === 'request' && route.classification.revision === FAST_PROTOCOL_VERSION;
  };
  const keys = Object.keys(body);
  if (!keys.every((key) => REQUEST_KEYS.has(key))) return classify();
  const id = body.id;
  const idKind = typeof id === 'number' ? (Number.isSafeInteger(id) ? 'safe' : Number.isInteger(id) ? 'integer' : 'fraction') : typeof id;
  const meta = (body.params as Record<string, unknown>)['_meta'];
  const shape = JSON.stringify([protocolVersionHeader, mcpMethodHeader, keys, body.jsonrpc, idKind, body.method, meta]);
  const known = classifiedShapes.get(shape);
  if (known !== undefined) return known;
  const verdict = classify();
  if (classifiedShapes.size >= MAX_REMEMBERED_SHAPES) classifiedShapes.clear();
  classifiedShapes.set(shape, verdict);
  return verdict;
}

/** RFC 9110 optional whitespace (SP, HTAB) trimmed, as the SDK compares header values. */
function stripOws(value: string): string {
  return value.replace(/^[\t ]+|[\t ]+$/g, '');
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
