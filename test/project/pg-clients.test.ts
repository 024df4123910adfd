// The suite's own PostgreSQL pools and clients cannot fail a file after its tests passed: the
// helper that opens them handles a connection the server ends while idle (that no test opens one by
// hand is test/project/pg-clients-owned.test.ts's check).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestDatabase } from '../support/database.js';
import { idleErrors, testClient, testPool } from '../support/pg-clients.js';

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
});
