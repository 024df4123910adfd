import { McpServer } from '@modelcontextprotocol/server';
import { installedSdkVersion } from './sdk-version.js';
import { missingSeams } from './server-seams.js';

/** The installed SDK lacks an internal @mcp-tasks/server relies on. */
export class SdkSeamMissingError extends Error {
  override readonly name = 'SdkSeamMissingError';
  constructor(
    readonly sdkVersion: string,
    readonly missing: readonly string[],
  ) {
    super(
      `@mcp-tasks/server cannot run on @modelcontextprotocol/server ${sdkVersion}: it lacks ${missing.join(', ')}. ` +
        'Install a version in the peer dependency range of @mcp-tasks/server.',
    );
  }
}

/** Throws {@link SdkSeamMissingError} when `server` (an McpServer with no tools yet) lacks a seam; registers a probe tool on it. */
export function checkSdkSeams(server: McpServer): void {
  const tool = server.registerTool('mcp-tasks-seam-probe', { description: 'probe' }, () => ({ content: [] }));
  const missing = missingSeams(server, tool);
  if (missing.length > 0) throw new SdkSeamMissingError(installedSdkVersion(), missing);
}

let checked = false;

/**
 * Checks once per process, on a throwaway McpServer, that the installed SDK has every seam in
 * server-seams.ts, so a changed SDK fails at start with the seam's name and not on a request.
 */
export function assertSdkSeams(): void {
  if (checked) return;
  checkSdkSeams(new McpServer({ name: 'mcp-tasks-seam-probe', version: '0.0.0' }));
  checked = true;
}
