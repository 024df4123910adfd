// The floor of a `tasks/get` on this machine: bare node:http and pg doing only what a read must do.
// It reads the body, parses it, runs one SELECT by primary key with the owner and expiry filters a
// real read has, serialises the task, and writes it: no MCP, no validation, no telemetry. The
// benchmark measures a demo node beside it with the same client (bench/scenarios/request-path.ts).
//   DATABASE_URL=… OWNER_KEY=… PORT=0 node bench/support/bare-tasks-get-server.mjs   → prints "listening on URL"
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const ownerKey = process.env.OWNER_KEY;
const SELECT = {
  name: 'bare-tasks-get',
  text: `SELECT id, status, status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms, result, error
           FROM mcp_tasks.tasks
          WHERE id = $1 AND owner_key = $2 AND (expires_at IS NULL OR expires_at > now())`,
};

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const { rows } = await pool.query({ ...SELECT, values: [message.params.taskId, ownerKey] });
      const row = rows[0];
      const reply = row
        ? {
            jsonrpc: '2.0',
            id: message.id,
            result: {
              taskId: row.id,
              status: row.status,
              ...(row.status_message === null ? {} : { statusMessage: row.status_message }),
              createdAt: row.created_at.toISOString(),
              lastUpdatedAt: row.last_updated_at.toISOString(),
              ttlMs: row.ttl_ms,
              pollIntervalMs: row.poll_interval_ms,
              ...(row.result === null ? {} : { result: row.result }),
              ...(row.error === null ? {} : { error: row.error }),
            },
          }
        : { jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'Task not found' } };
      const body = JSON.stringify(reply);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`);
});
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
