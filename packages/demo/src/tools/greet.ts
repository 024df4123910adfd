import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** `greet`: an ordinary tool (never a task), registered the usual way. */
export function registerGreet(server: McpServer): void {
  server.registerTool(
    'greet',
    { description: 'Says hello (an ordinary tool, never a task).', inputSchema: z.object({ name: z.string() }) },
    async ({ name }) => ({ content: [{ type: 'text', text: `Hello, ${name}!` }] }),
  );
}
