// TLS to a PostgreSQL of the test's own (the machine's binaries) with a certificate for
// `localhost` signed by a CA the test makes with openssl: libpq's `sslmode=require` (encrypted,
// not verified: uselibpqcompat=true) and `verify-full` with the CA file work for both connection
// strings, the pool's and the direct one (the node's LISTEN, lease and maintenance); a wrong CA
// fails, on either, with one clear sentence.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newTaskId } from '@mcp-tasks/core';
import { PostgresConnectionError, PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../../packages/demo/src/cluster/embedded-postgres.js';
import { within } from '../support/within.js';
import { testClient } from '../support/pg-clients.js';

const INSTALL = '/usr/lib/postgresql/15';
const skip = !existsSync(path.join(INSTALL, 'bin', 'initdb'))
  ? `no PostgreSQL installation at ${INSTALL}`
  : spawnSync('openssl', ['version']).status !== 0
    ? 'openssl is not installed'
    : undefined;

let dir: string;
let server: EmbeddedPostgresServer;
let password: string;
let port: number;
const quiet = { warn: () => undefined, error: () => undefined };

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA (`<name>.pem`, `<name>.key`). */
function makeCa(name: string): void {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.pem`);
}

before(async () => {
  if (skip) return;
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-tls-'));
  await chmod(dir, 0o755);
  makeCa('ca');
  makeCa('other-ca');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
  await import('node:fs/promises').then((fs) => fs.writeFile(path.join(dir, 'san.ext'), 'subjectAltName = DNS:localhost\n'));
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.pem');
  // PostgreSQL wants its key private to the user it runs as (postgres, when the test is root).
  await chmod(path.join(dir, 'server.key'), 0o600);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const file of ['server.key', 'server.pem']) await chown(path.join(dir, file), uid, gid);
  }
  server = await startEmbeddedPostgres({
    parentDir: dir,
    name: 'pg-tls',
    installDir: INSTALL,
    stopOnSignal: true,
    postgresFlags: ['-c', 'ssl=on', '-c', `ssl_cert_file=${path.join(dir, 'server.pem')}`, '-c', `ssl_key_file=${path.join(dir, 'server.key')}`],
  });
  const url = new URL(server.url);
  password = decodeURIComponent(url.password);
  port = Number(url.port);
});

after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function urlWith(params: string): string {
  return `postgres://postgres:${encodeURIComponent(password)}@localhost:${port}/postgres?${params}`;
}

const owner = { subject: 'tls', server: 'tls', clientId: '', resource: '' };

/** A store on `pooled` and a node on `direct`: a task is created, and every connection of the process is encrypted. */
async function roundTrip(pooled: string, direct: string): Promise<void> {
  const store = await PostgresTaskStore.connect({ connectionString: pooled, directConnectionString: direct, logger: quiet, schema: `tls_${Math.random().toString(36).slice(2, 8)}` });
  try {
    const node = await PostgresTaskNode.start(store, { logger: quiet, testSignals: true });
    try {
      node.listener!.start();
      await within(node.listener!.testSignals.listening.waitOnce(10_000), 11_000, 'the listener listens over TLS');
      const taskId = newTaskId();
      await store.create({ taskId, owner, tool: 't', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: node.nodeId }, { maxLive: Infinity });
      assert.equal((await store.get({ taskId, owner }))?.status, 'working');
      const client = testClient({ connectionString: urlWith('sslmode=verify-full&sslrootcert=' + path.join(dir, 'ca.pem')) });
      client.on('error', () => undefined);
      await client.connect();
      try {
        const { rows } = await client.query<{ name: string; ssl: boolean }>(
          `SELECT regexp_replace(a.application_name, ':[0-9a-f]{16}$', '') AS name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
            WHERE a.application_name ~ ':${node.identity.instanceId}$' ORDER BY 1`,
        );
        // The lease and LISTEN connections, and the maintenance leader's once it ran a round, all encrypted.
        assert.deepEqual([...new Set(rows.map((row) => row.name))].filter((name) => name !== 'mcp-tasks:maintenance'), ['mcp-tasks:lease', 'mcp-tasks:listener']);
        assert.ok(rows.every((row) => row.ssl), JSON.stringify(rows));
        const pool = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = 'postgres' AND NOT s.ssl AND a.backend_type = 'client backend'`);
        assert.equal(pool.rows[0]!.n, 0, 'no connection of the process is in the clear');
      } finally {
        await client.end();
      }
    } finally {
      await node.stop();
    }
  } finally {
    await store.close();
  }
}

describe('TLS', { skip, timeout: 120_000 }, () => {
  it("sslmode=require (libpq's: encrypted, not verified) works for both connection strings", async () => {
    await roundTrip(urlWith('uselibpqcompat=true&sslmode=require'), urlWith('uselibpqcompat=true&sslmode=require'));
  });

  it('sslmode=verify-full with the CA file works for both connection strings', async () => {
    const verified = urlWith(`sslmode=verify-full&sslrootcert=${path.join(dir, 'ca.pem')}`);
    await roundTrip(verified, verified);
  });

  it('a wrong CA fails with one clear sentence, on the pool\'s connection string and on the direct one', async () => {
    const right = urlWith(`sslmode=verify-full&sslrootcert=${path.join(dir, 'ca.pem')}`);
    const wrong = urlWith(`sslmode=verify-full&sslrootcert=${path.join(dir, 'other-ca.pem')}`);
    const sentence = (which: string) =>
      new RegExp(`^PostgreSQL's TLS certificate is not signed by a CA this process trusts \\(UNABLE_TO_VERIFY_LEAF_SIGNATURE\\) on ${which}: give the CA that signed it with sslrootcert=<file> \\([^\\n]*\\)\\.$`);
    await assert.rejects(PostgresTaskStore.connect({ connectionString: wrong, logger: quiet }), (error: Error) => {
      assert.ok(error instanceof PostgresConnectionError, String(error));
      assert.match(error.message, sentence('the connection string'));
      assert.doesNotMatch(error.message, new RegExp(password), 'the password is never repeated');
      return true;
    });
    // The pool's is right, the direct one is wrong: the node's lease cannot connect.
    const store = await PostgresTaskStore.connect({ connectionString: right, logger: quiet });
    try {
      await assert.rejects(PostgresTaskNode.start(store, { directConnectionString: wrong, logger: quiet }), (error: Error) => {
        assert.ok(error instanceof PostgresConnectionError, String(error));
        assert.match(error.message, sentence('the direct connection string'));
        return true;
      });
    } finally {
      await store.close();
    }
    assert.ok((await readFile(path.join(dir, 'other-ca.pem'), 'utf8')).includes('BEGIN CERTIFICATE'));
  });
});
