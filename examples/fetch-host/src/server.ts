// McpTasks.handler on a fetch host: Hono here, on Node through @hono/node-server. The handler is
// a fetch function, so any host that hands over a WHATWG Request takes it the same way:
//   Bun.serve({ fetch: (request) => handler.fetch(request) })
//   Deno.serve((request) => handler.fetch(request))
// With authorization, pass the verified token: handler.fetch(request, { authInfo }).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { defineTool, McpTasks } from '@mcp-tasks/server';
import * as z from 'zod';

const exportTool = defineTool({
  name: 'export',
  task: 'optional',
  input: z.object({ project: z.string() }),
  async execute({ project }, ctx) {
    await ctx.progress(1, 1);
    return { content: [{ type: 'text', text: `Exported ${project}.` }] };
  },
});

// One node, tasks in memory: pass { store, node } (PostgresTaskStore, PostgresTaskNode) for a cluster.
const tasks = new McpTasks();
const handler = tasks.handler({ name: 'files', version: '1.0.0', tools: [exportTool] });

const app = new Hono();
app.get('/healthz', (c) => c.json({ status: 'ok' }));
app.all('/mcp', (c) => handler.fetch(c.req.raw));

const host = process.env['HOST'] ?? '127.0.0.1';
const http = serve({ fetch: app.fetch, port: Number(process.env['PORT'] ?? 3000), hostname: host }, (info) => {
  console.log(`listening on http://${info.address}:${info.port}/mcp`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    http.close();
    await tasks.drain(10_000);
    await handler.close();
    await tasks.close();
    process.exit(0);
  });
}
