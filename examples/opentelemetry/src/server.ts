// The standalone server with OpenTelemetry: McpTasks uses the global providers telemetry.ts
// registered. Each tools/call and tasks/* request is a SERVER span that continues the client's
// trace (traceparent in params._meta); each run is an `execute_tool` span, a child of the
// tools/call that created it; metrics include mcp_tasks_created_total, mcp_tasks_running and
// mcp_tasks_run_duration_seconds (docs/observability.md has them all).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, McpTasks } from '@mcp-tasks/server';
import * as z from 'zod';

const crunch = defineTool({
  name: 'crunch',
  task: 'required',
  input: z.object({ steps: z.number().int().min(1).max(100).default(5) }),
  async execute({ steps }, ctx) {
    for (let step = 1; step <= steps && !ctx.cancelled(); step += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await ctx.progress(step, steps);
    }
    return { content: [{ type: 'text', text: `Crunched ${steps} steps.` }] };
  },
});

const databaseUrl = process.env['DATABASE_URL'];
if (!databaseUrl) {
  console.error('Set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).');
  process.exit(2);
}
const store = await PostgresTaskStore.connect({ connectionString: databaseUrl });
const node = await PostgresTaskNode.start(store);
// Pass { telemetry: { tracerProvider, meterProvider } } to use providers other than the global ones.
const tasks = new McpTasks({ store, node });
const handler = tasks.handler({ name: 'crunch-server', version: '0.1.0', tools: [crunch] });

const http = createServer(handler.node);
http.listen(Number(process.env['PORT'] ?? 3000), process.env['HOST'] ?? '127.0.0.1', () => {
  const { address, port } = http.address() as AddressInfo;
  console.log(`listening on http://${address}:${port}/mcp`);
});
process.once('SIGTERM', () => {
  http.close();
  void tasks
    .drain(10_000)
    .then(() => http.closeAllConnections())
    .then(() => handler.close())
    .then(() => tasks.close())
    .then(() => process.exit(0));
});
