import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadMigrations } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { startSilentServer, type SilentServer } from '../../../test/support/silent-server.js';
import { mcpTasks, packageRoot } from './support/run-mcp-tasks.js';
import { testPool } from '../../../test/support/pg-clients.js';

describe('the mcp-tasks command', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  before(async () => {
    database = await createTestDatabase();
    pool = testPool({ connectionString: database.url, max: 2 });
  });
  after(async () => {
    await pool?.end();
    await database?.drop();
  });

  const schemaExists = async (schema: string) =>
    (await pool.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = $1`, [schema])).rows.length === 1;

  it('--help lists the commands and the exit codes; --version prints the package version', async () => {
    const help = await mcpTasks(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^\s+migrate\s/m);
    assert.match(help.stdout, /^\s+status\s/m);
    for (const name of ['call', 'tasks', 'nodes']) assert.match(help.stdout, new RegExp(`^\\s+${name}\\s`, 'm'));
    assert.match(help.stdout, /5 call: the tool reported an error, 130 call: stopped by Ctrl-C/);
    assert.match(help.stdout, /--database-url/);
    assert.match(help.stdout, /Exit codes/);
    const migrateHelp = await mcpTasks(['migrate', '--help']);
    assert.equal(migrateHelp.code, 0);
    assert.match(migrateHelp.stdout, /--print/);
    const version = await mcpTasks(['--version']);
    const pkg = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string };
    assert.equal(version.stdout.trim(), pkg.version);
  });

  it('an unknown command or option is a usage error (exit 2) that points at --help', async () => {
    const command = await mcpTasks(['migrat']);
    assert.equal(command.code, 2);
    assert.match(command.stderr, /unknown command "migrat"/);
    const option = await mcpTasks(['status', '--print'], { DATABASE_URL: database.url });
    assert.equal(option.code, 2);
    assert.match(option.stderr, /status has no option --print/);
    const extra = await mcpTasks(['migrate', 'now'], { DATABASE_URL: database.url });
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /migrate takes no arguments/);
    const timeout = await mcpTasks(['status', '--connect-timeout', 'soon'], { DATABASE_URL: database.url });
    assert.equal(timeout.code, 2);
    assert.match(timeout.stderr, /--connect-timeout must be a positive number of seconds/);
    const nothing = await mcpTasks([]);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /Usage: mcp-tasks <command>/);
  });

  it('migrate applies pending migrations, then reports the schema up to date', async () => {
    const first = await mcpTasks(['migrate', '--schema', 'from_cli'], { DATABASE_URL: database.url });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Applied to schema from_cli: 0001_tasks\.sql/);
    const second = await mcpTasks(['migrate', '--schema', 'from_cli'], { DATABASE_URL: database.url });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /Schema from_cli is up to date\./);
    const { rows } = await pool.query<{ version: number }>('SELECT version FROM from_cli.schema_migrations ORDER BY version');
    assert.deepEqual(rows.map((r) => r.version), (await loadMigrations()).map((m) => m.version));
  });

  it('--database-url is used over DATABASE_URL', async () => {
    const run = await mcpTasks(['migrate', '--schema', 'from_flag', '--database-url', database.url], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(await schemaExists('from_flag'));
  });

  it('migrate --print prints the pending SQL and applies nothing; the printed script migrates like the runner', async () => {
    const printed = await mcpTasks(['migrate', '--print', '--schema', 'printed'], { DATABASE_URL: database.url });
    assert.equal(printed.code, 0, printed.stderr);
    for (const migration of await loadMigrations()) assert.ok(printed.stdout.includes(migration.sql.trim()), `${migration.name} is in the script`);
    assert.equal(await schemaExists('printed'), false, '--print applied nothing');
    await pool.query(printed.stdout);
    const status = await mcpTasks(['status', '--schema', 'printed'], { DATABASE_URL: database.url });
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /Up to date\./);
    const again = await mcpTasks(['migrate', '--print', '--schema', 'printed'], { DATABASE_URL: database.url });
    assert.match(again.stdout, /none pending/);
    assert.doesNotMatch(again.stdout, /CREATE TABLE tasks/);
  });

  it('status lists pending migrations (exit 3), then applied ones (exit 0)', async () => {
    const before = await mcpTasks(['status', '--schema', 'status_check'], { DATABASE_URL: database.url });
    assert.equal(before.code, 3, before.stderr);
    assert.match(before.stdout, /pending {2}0001_tasks\.sql/);
    assert.equal(await schemaExists('status_check'), false, 'status changed nothing');
    assert.equal((await mcpTasks(['migrate', '--schema', 'status_check'], { DATABASE_URL: database.url })).code, 0);
    const afterwards = await mcpTasks(['status', '--schema', 'status_check'], { DATABASE_URL: database.url });
    assert.equal(afterwards.code, 0, afterwards.stderr);
    assert.match(afterwards.stdout, /applied {2}0001_tasks\.sql {2}\d{4}-/);
    assert.match(afterwards.stdout, /Up to date\./);
  });

  it('a database migrated by a newer release is reported ahead of the code (exit 4) and migrate refuses it', async () => {
    assert.equal((await mcpTasks(['migrate', '--schema', 'ahead'], { DATABASE_URL: database.url })).code, 0);
    await pool.query(`INSERT INTO ahead.schema_migrations (version, name) VALUES (9999, '9999_from_the_future.sql')`);
    const status = await mcpTasks(['status', '--schema', 'ahead'], { DATABASE_URL: database.url });
    assert.equal(status.code, 4);
    assert.match(status.stdout, /unknown {2}9999_from_the_future\.sql/);
    assert.match(status.stdout, /database ahead of the code/);
    const migrate = await mcpTasks(['migrate', '--schema', 'ahead'], { DATABASE_URL: database.url });
    assert.equal(migrate.code, 4);
    assert.match(migrate.stderr, /database ahead of the code/);
  });

  it('a missing or invalid database URL is a usage error that does not echo the URL', async () => {
    const missing = await mcpTasks(['status']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no database: pass --database-url or set DATABASE_URL/);
    const invalid = await mcpTasks(['status', '--database-url', 'secret-password@db']);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /--database-url is not a valid URL/);
    assert.doesNotMatch(invalid.stderr, /secret-password/);
    const wrongScheme = await mcpTasks(['status'], { DATABASE_URL: 'mysql://root@127.0.0.1/db' });
    assert.equal(wrongScheme.code, 2);
    assert.match(wrongScheme.stderr, /DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//);
  });

  it('sslmode=require against a server without TLS says so (exit 1)', async (t) => {
    const ssl = await pool.query<{ ssl: string }>('SHOW ssl');
    if (ssl.rows[0]?.ssl === 'on') return t.skip('the test server has TLS enabled');
    const url = new URL(database.url);
    url.searchParams.set('sslmode', 'require');
    const run = await mcpTasks(['status'], { DATABASE_URL: url.toString() });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /does not accept TLS, but the URL asks for it \(sslmode=require\)/);
  });

  describe('against a host that accepts TCP and never answers', () => {
    let silent: SilentServer;
    before(async () => {
      silent = await startSilentServer();
    });
    after(async () => {
      await silent?.close();
    });

    it('gives up after --connect-timeout with a clear message (exit 1)', async () => {
      const run = await mcpTasks(['status', '--connect-timeout', '0.5'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${silent.port}/postgres` });
      assert.equal(run.code, 1);
      assert.match(run.stderr, new RegExp(`could not connect to 127\\.0\\.0\\.1:${silent.port} within 0\\.5 s`));
      assert.ok(silent.accepted() >= 1);
      assert.ok(run.ms < 10_000, `took ${run.ms} ms`);
    });
  });
});
