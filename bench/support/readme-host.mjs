// The host a library user writes from the README: defineTool, McpTasks.handler and
// createServer(handler.node), on PostgreSQL, the per-owner limits off (as the demo node's are in
// the benchmarks) and the quota off. The request-path scenario measures it beside the demo node
// and the bare server (bench/scenarios/request-path.ts). Runs the built packages.
//   DATABASE_URL=… PORT=0 node bench/support/readme-host.mjs   → prints "listening on URL"
import { createServer } from 'node:http';
import { defineTool, McpTasks } from '@mcp-tasks/server';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import * as z from 'zod';

const slowCompute = defineTool({
  name: 'slow_compute',
  task: 'optional',
  input: z.object({ seconds: z.number().min(0).max(60) }),
  async execute({ seconds }, ctx) {
    if (seconds > 0) await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    await ctx.progress(1, 1);
    return { content: [{ type: 'text', text: `Computed for ${seconds} s.` }] };
  },
});

const store = await PostgresTaskStore.connect({ connectionString: process.env.DATABASE_URL, migrate: true });
const node = await PostgresTaskNode.start(store, { nodeId: process.env.NODE_ID ?? 'readme-host' });
const tasks = new McpTasks({ store, node, rateLimit: false, inFlight: false, maxPerPrincipal: Infinity });
const handler = tasks.handler({ name: 'files', version: '1.0.0', tools: [slowCompute] });
const server = createServer(handler.node).listen(Number(process.env.PORT ?? 3100), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`);
});
process.once('SIGTERM', async () => {
  server.closeAllConnections();
  server.close();
  await tasks.drain(1_000);
  await handler.close();
  await tasks.close();
  process.exit(0);
});
