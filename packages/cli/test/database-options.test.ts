// Behind a transaction pooler DATABASE_URL names the pooler and DIRECT_DATABASE_URL PostgreSQL
// itself: a command (migrate above all) takes the direct one, and --database-url wins over both.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseOptions } from '../src/database/database-options.js';

test('DIRECT_DATABASE_URL comes before DATABASE_URL, and --database-url before both', () => {
  const env = { DATABASE_URL: 'postgres://pooler:6432/db', DIRECT_DATABASE_URL: 'postgres://primary:5432/db' };
  assert.deepEqual(databaseOptions(undefined, env, undefined), { url: env.DIRECT_DATABASE_URL, source: 'DIRECT_DATABASE_URL', connectTimeoutMs: 10_000 });
  assert.equal(databaseOptions('postgres://other/db', env, undefined).source, '--database-url');
  assert.deepEqual(databaseOptions(undefined, { DATABASE_URL: env.DATABASE_URL, DIRECT_DATABASE_URL: '' }, undefined).source, 'DATABASE_URL');
});
