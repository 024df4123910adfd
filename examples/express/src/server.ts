// McpTasks.handler inside an Express app: the app keeps its own routes and middleware, and /mcp
// goes through handler.fetch (the SDK's toNodeHandler turns the Express request into a WHATWG
// one, with the body express.json() already parsed and the token an auth middleware put on
// req.auth). `app.all('/mcp', handler.node)` (without express.json() in front) serves it with
// the fast lane instead.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { toNodeHandler } from '@modelcontextprotocol/node';
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
const mcp = toNodeHandler(handler);

const app = express();
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.post('/mcp', express.json({ limit: '4mb' }), (req, res) => void mcp(req, res, req.body));
app.all('/mcp', (req, res) => void mcp(req, res));

const http = app.listen(Number(process.env['PORT'] ?? 3000), process.env['HOST'] ?? '127.0.0.1', () => {
  const { address, port } = http.address() as AddressInfo;
  console.log(`listening on http://${address}:${port}/mcp`);
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
