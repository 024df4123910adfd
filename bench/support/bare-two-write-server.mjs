// The floor of a whole task on this machine, end to end: bare node:http and pg doing only the two
// writes a task must make. `tools/call` INSERTs a working row (autocommit), answers with its id,
// then UPDATEs it to completed (a second autocommit); `tasks/get` is the bare server's SELECT. No
// MCP, no validation, no quota, no batching: one statement and one commit per write. The
// benchmark drives a demo node and this server with the same load generator
// (bench/scenarios/request-path.ts, scenario 8).
//   DATABASE_URL=… PORT=0 node bench/support/bare-two-write-server.mjs   → prints "listening on URL"
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => undefined);
const OWNER_KEY = JSON.stringify(['bench-two-write', 'bench', 'client', '']);
const INSERT = {
  name: 'bare-two-write-insert',
  text: `INSERT INTO mcp_tasks.tasks (
           id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
           tool, scopes, status, status_message, created_at, last_updated_at,
           ttl_ms, expires_at, poll_interval_ms, node_id
         ) VALUES ($1, 'bench-two-write', 'bench', 'client', '', $2, 'slow_compute', '{}', 'working', NULL, now(), now(),
                   3600000, now() + interval '1 hour', 1000, 'bare-two-write')`,
};
const COMPLETE = {
  name: 'bare-two-write-complete',
  text: `UPDATE mcp_tasks.tasks SET status = 'completed', result = $2::jsonb, last_updated_at = now()
          WHERE id = $1 AND status = 'working'`,
};
const SELECT = {
  name: 'bare-two-write-get',
  text: `SELECT id, status, status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms, result, error
           FROM mcp_tasks.tasks
          WHERE id = $1 AND owner_key = $2 AND (expires_at IS NULL OR expires_at > now())`,
};
const RESULT = JSON.stringify({ content: [{ type: 'text', text: 'done' }] });

function answer(res, body) {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function handle(message, res) {
  if (message.method === 'tools/call') {
    const taskId = randomUUID();
    await pool.query({ ...INSERT, values: [taskId, OWNER_KEY] });
    answer(res, { jsonrpc: '2.0', id: message.id, result: { taskId, status: 'working' } });
    await pool.query({ ...COMPLETE, values: [taskId, RESULT] });
    return;
  }
  const { rows } = await pool.query({ ...SELECT, values: [message.params.taskId, OWNER_KEY] });
  const row = rows[0];
  answer(
    res,
    row
      ? { jsonrpc: '2.0', id: message.id, result: { taskId: row.id, status: row.status, createdAt: row.created_at.toISOString(), lastUpdatedAt: row.last_updated_at.toISOString(), ttlMs: row.ttl_ms, pollIntervalMs: row.poll_interval_ms, ...(row.result === null ? {} : { result: row.result }) } }
      : { jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'Task not found' } },
  );
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (error) {
      res.writeHead(400).end(String(error));
      return;
    }
    handle(message, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`);
});
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
