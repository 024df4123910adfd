// The official MCP conformance suite's tasks-* server scenarios against the demo server, once
// with the in-memory store and once with PostgreSQL: every check of the nine scored scenarios
// must pass, and only the notifications scenario (always skipped upstream) may run no check.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ALWAYS_SKIPPED, runConformance, SCENARIOS, startDemo } from '../../scripts/conformance.mjs';
import { createTestDatabase } from '../support/database.js';

const outputRoot = path.resolve('conformance-results');

async function conformanceOf(store: 'memory' | 'postgres', databaseUrl: string) {
  const demo = await startDemo({ DATABASE_URL: databaseUrl });
  try {
    return await runConformance(demo.url, path.join(outputRoot, `test-${store}-${Date.now()}`));
  } finally {
    await demo.stop();
  }
}

function assertAllPassed(results: Awaited<ReturnType<typeof runConformance>>) {
  assert.deepEqual(
    results.map((r: { scenario: string }) => r.scenario),
    SCENARIOS,
  );
  for (const result of results) {
    assert.equal(result.failed, 0, `${result.scenario} failed:\n${result.failures.join('\n')}`);
    if (result.scenario === ALWAYS_SKIPPED) continue;
    assert.ok(result.passed > 0, `${result.scenario} ran no check:\n${result.failures.join('\n')}`);
    assert.ok(result.ok, `${result.scenario}:\n${result.failures.join('\n')}`);
  }
}

describe('the official conformance suite (tasks-* scenarios)', { timeout: 600_000 }, () => {
  it('passes every check with the in-memory store', async () => {
    assertAllPassed(await conformanceOf('memory', ''));
  });

  it('passes every check with PostgreSQL', async (t) => {
    if (!process.env['DATABASE_URL']) return t.skip('DATABASE_URL is not set (run through npm test)');
    const database = await createTestDatabase();
    after(() => database.drop());
    assertAllPassed(await conformanceOf('postgres', database.url));
  });
});
