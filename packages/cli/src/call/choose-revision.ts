import { LegacyHttpClient } from './legacy-http-client.js';
import { McpHttpClient, RpcError, TASKS_EXTENSION, TransportError, type JsonObject } from './mcp-http-client.js';

/** The revision a call speaks to its server: its tasks are the extension's, or 2025-11-25's. */
export type CallRevision = { readonly revision: '2026-07-28'; readonly client: McpHttpClient } | { readonly revision: '2025-11-25'; readonly client: LegacyHttpClient };

/**
 * 2026-07-28 when `server/discover` lists the tasks extension. Otherwise (the server does not
 * speak 2026-07-28, or has no tasks extension) 2025-11-25 when its `initialize` advertises task
 * calls (`capabilities.tasks.requests.tools.call`). A server with neither is called at
 * 2026-07-28, where a task tool runs inline or is refused with the server's own error.
 */
export async function chooseRevision(url: string, token: string | undefined, signal: AbortSignal): Promise<CallRevision> {
  const current = new McpHttpClient(url, token);
  const tasksExtension = await attempt(async () => {
    const discovered = await current.request('server/discover', {}, signal);
    return (discovered['capabilities'] as JsonObject | undefined)?.['extensions']?.[TASKS_EXTENSION] !== undefined;
  });
  if (tasksExtension) return { revision: '2026-07-28', client: current };
  const legacy = new LegacyHttpClient(url, token);
  const legacyTasks = await attempt(async () => {
    const initialized = await legacy.initialize(signal);
    return (initialized['capabilities'] as JsonObject | undefined)?.['tasks']?.['requests']?.['tools']?.['call'] !== undefined;
  });
  if (legacyTasks) return { revision: '2025-11-25', client: legacy };
  await legacy.close();
  return { revision: '2026-07-28', client: current };
}

/** `probe`'s answer, or false when the server answered it with an error or not at all. */
async function attempt(probe: () => Promise<boolean>): Promise<boolean> {
  try {
    return await probe();
  } catch (error) {
    if (error instanceof RpcError || error instanceof TransportError) return false;
    throw error;
  }
}
