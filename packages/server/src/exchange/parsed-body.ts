import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import { jsonTextTooDeep } from './json-depth.js';

/** A POST's body as JSON, or the mark of JSON text nested past `MAX_JSON_DEPTH` (never parsed). */
export type ParsedBody = { readonly body: unknown; readonly tooDeep?: undefined } | { readonly tooDeep: true };

/**
 * A POST's JSON body, parsed at most once along the handler chain: the `parsedBody` a host (or an
 * earlier wrapper) passed, else parsed here from a clone, so the request still reaches the SDK
 * unread. Text nested deeper than the bound is not parsed at all. `undefined` when the body is
 * not JSON: that is the SDK's to answer.
 */
export async function parsedBodyOf(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<ParsedBody | undefined> {
  if (requestOptions?.parsedBody !== undefined) return { body: requestOptions.parsedBody };
  const text = await request.clone().text();
  if (jsonTextTooDeep(text)) return { tooDeep: true };
  try {
    return { body: JSON.parse(text) };
  } catch {
    return undefined;
  }
}
