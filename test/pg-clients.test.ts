// The suite's own PostgreSQL pools and clients cannot fail a file after its tests passed: the
// helper that opens them handles a connection the server ends while idle, and no test opens one
// by hand (a pool without an error listener turns "terminating connection due to administrator
// command" at teardown into an uncaught exception; that flaked test/isolation-limits.test.ts).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createTestDatabase } from './support/database.js';
import { ROOT } from './support/demo-process.js';
import { idleErrors, testClient, testPool } from './support/pg-clients.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'fixtures' ? [] : sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe("the suite's PostgreSQL connections", { timeout: 60_000 }, () => {
  it('a pool and a client whose idle connections the server ends (the database dropped) note the error and the file goes on', async () => {
    const database = await createTestDatabase();
    const pool = testPool({ connectionString: database.url, max: 1 });
    const client = testClient({ connectionString: database.url });
    await client.connect();
    await pool.query('SELECT 1');
    await client.query('SELECT 1');
    const before = idleErrors.length;
    await database.drop();
    const start = Date.now();
    while (idleErrors.length < before + 2 && Date.now() - start < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(idleErrors.length >= before + 2, 'both idle connections reported their end');
    assert.ok(idleErrors.slice(before).some((error) => /terminating connection/.test(error.message)), idleErrors.map((error) => error.message).join('; '));
    await pool.end();
    await client.end().catch(() => {});
  });

  it('no test opens a pg.Pool or pg.Client by hand (test/support/pg-clients.ts does)', () => {
    const files = [...sources(path.join(ROOT, 'test')), ...readdirSync(path.join(ROOT, 'packages')).flatMap((pkg) => {
      try {
        return sources(path.join(ROOT, 'packages', pkg, 'test'));
      } catch {
        return [];
      }
    })];
    const byHand = files.filter((file) => !file.endsWith(path.join('support', 'pg-clients.ts')) && !file.endsWith('pg-clients.test.ts') && /new pg\.(Pool|Client)\(|new (Pool|Client)\(\{ connectionString/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(byHand.map((file) => path.relative(ROOT, file)), []);
  });
});
