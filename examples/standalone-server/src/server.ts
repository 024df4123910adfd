// A standalone MCP server with durable tasks on PostgreSQL: one task tool that asks the client a
// question (an elicitation) and one ordinary tool, served by McpTasks.handler over node:http.
//
//   DATABASE_URL=postgres://... PORT=3000 npm start
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, McpTasks } from '@mcp-tasks/server';
import * as z from 'zod';

const publish = defineTool({
  name: 'publish',
  title: 'Publish a project',
  description: 'Builds a project, asks whether to publish it, and says what it did.',
  task: 'optional', // a task for clients that declare the extension, inline for the others
  input: z.object({ project: z.string() }),
  outputSchema: z.object({ project: z.string(), published: z.boolean() }),
  async execute({ project }, ctx) {
    await ctx.progress(1, 2, 'built');
    // The task goes input_required until the client answers through tasks/update.
    const answer = await ctx.elicit('confirm', {
      message: `Publish ${project}?`,
      requestedSchema: { type: 'object', properties: { publish: { type: 'boolean' } }, required: ['publish'] },
    });
    const published = answer.action === 'accept' && answer.content?.['publish'] === true;
    return {
      content: [{ type: 'text', text: published ? `Published ${project}.` : `Kept ${project}.` }],
      structuredContent: { project, published },
    };
  },
});

const databaseUrl = process.env['DATABASE_URL'];
if (!databaseUrl) {
  console.error('Set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).');
  process.exit(2);
}

// The store applies pending migrations; the node beside it runs LISTEN/NOTIFY, its lease and the
// cluster's maintenance, so several copies of this process can share the database.
const store = await PostgresTaskStore.connect({ connectionString: databaseUrl, migrate: true });
const nodeId = process.env['NODE_ID']; // default: a random id per process
const node = await PostgresTaskNode.start(store, nodeId ? { nodeId } : {});
const tasks = new McpTasks({ store, node });

const handler = tasks.handler({
  name: 'example-server', // part of every task's owner: the same on every node
  version: '0.1.0',
  tools: [publish],
  register: (server) => {
    server.registerTool('greet', { description: 'Says hello', inputSchema: z.object({ name: z.string() }) }, async ({ name }) => ({
      content: [{ type: 'text', text: `Hello, ${name}!` }],
    }));
  },
  onerror: (error) => console.error('mcp:', error.message),
});

const http = createServer(handler.node);
http.listen(Number(process.env['PORT'] ?? 3000), process.env['HOST'] ?? '127.0.0.1', () => {
  const { address, port } = http.address() as AddressInfo;
  console.log(`listening on http://${address}:${port}/mcp`);
});

async function shutdown(): Promise<void> {
  http.close();
  await tasks.drain(10_000); // running tasks get 10 s; open listen streams end gracefully
  http.closeAllConnections();
  await handler.close();
  await tasks.close(); // the runtime, then the node (its lease last), then the store
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
