import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_CONNECTION_TIMEOUT_MS, PostgresTaskStore } from '@mcp-tasks/postgres';
import { startSilentServer, type SilentServer } from '../support/silent-server.js';

/** Settles with how long `promise` took to reject, or fails after `limitMs` (the test's bound). */
async function rejectionTime(promise: Promise<unknown>, limitMs: number): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${limitMs} ms`)), limitMs);
  });
  try {
    await Promise.race([promise.then(() => assert.fail('connect resolved against a silent host')), limit]);
    assert.fail('unreachable');
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('still pending')) throw error;
    return { ms: performance.now() - started, error };
  } finally {
    clearTimeout(timer);
  }
}

describe('PostgresTaskStore.connect against a host that accepts TCP and never answers', { timeout: 30_000 }, () => {
  let silent: SilentServer;
  before(async () => {
    silent = await startSilentServer();
  });
  after(async () => {
    await silent.close();
  });

  it('fails after connectionTimeoutMillis instead of hanging', async () => {
    const url = `postgres://postgres@127.0.0.1:${silent.port}/postgres`;
    const { ms, error } = await rejectionTime(PostgresTaskStore.connect({ connectionString: url, connectionTimeoutMillis: 300 }), 5_000);
    assert.ok(silent.accepted() >= 1, 'the store reached the silent host');
    assert.ok(ms >= 250, `failed after ${ms} ms, before the timeout`);
    assert.match(String(error), /timeout/i);
  });

  it('fails within the 10 s default when no timeout is configured', async () => {
    assert.equal(DEFAULT_CONNECTION_TIMEOUT_MS, 10_000);
    const url = `postgres://postgres@127.0.0.1:${silent.port}/postgres`;
    const { ms, error } = await rejectionTime(PostgresTaskStore.connect({ connectionString: url }), 15_000);
    assert.ok(ms >= 9_000, `failed after ${ms} ms`);
    assert.match(String(error), /timeout/i);
  });
});
