// An McpTasks server on a real HTTP port for the tests that need options the demo does not take
// (`tasks: false`, telemetry providers): `createMcpHandler` behind a minimal Node HTTP bridge.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpTasks, type McpTasksOptions, type AnyTaskTool } from '@mcp-tasks/server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';

export interface McpTasksHttp {
  readonly url: string;
  readonly tasks: McpTasks;
  close(): Promise<void>;
}

export async function startMcpTasksHttp(options: McpTasksOptions, tools: readonly AnyTaskTool[]): Promise<McpTasksHttp> {
  const tasks = new McpTasks({ serverName: 'test-server', ...options });
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'test-server', version: '1.0.0' });
    tasks.register(server, tools);
    return server;
  });
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
        const request = new Request(`http://localhost${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(req.method === 'POST' ? { body } : {}) });
        const response = await handler.fetch(request, req.method === 'POST' ? { parsedBody: JSON.parse(body) } : {});
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      })().catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    tasks,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await handler.close();
      await tasks.close();
    },
  };
}
