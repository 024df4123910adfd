import { RpcError, type JsonObject, type RpcClient } from './json-rpc-types.js';

/** At most this many pages of tools/list: a server whose cursor never ends is not followed forever. */
const MAX_PAGES = 100;

/** Every tool tools/list shows (all pages); undefined when the server answers tools/list with an error. */
export async function listTools(client: RpcClient, signal: AbortSignal): Promise<JsonObject[] | undefined> {
  const tools: JsonObject[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    let listed: JsonObject;
    try {
      listed = await client.request('tools/list', cursor === undefined ? {} : { cursor }, signal);
    } catch (error) {
      if (error instanceof RpcError) return undefined;
      throw error;
    }
    for (const tool of Array.isArray(listed['tools']) ? (listed['tools'] as unknown[]) : []) {
      if (typeof tool === 'object' && tool !== null && typeof (tool as JsonObject)['name'] === 'string') tools.push(tool as JsonObject);
    }
    if (typeof listed['nextCursor'] !== 'string' || listed['nextCursor'] === '') break;
    cursor = listed['nextCursor'];
  }
  return tools;
}
