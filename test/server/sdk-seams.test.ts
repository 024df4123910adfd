// Every SDK internal @mcp-tasks/server leans on lives in packages/server/src/sdk/, and a changed
// SDK fails at start with the seam's name and the SDK's version.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { McpTasks, SdkSeamMissingError } from '@mcp-tasks/server';
import { McpServer } from '@modelcontextprotocol/server';
import { checkSdkSeams } from '../../packages/server/src/sdk/assert-sdk-seams.js';

const SERVER_SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'server', 'src');
const SDK_VERSION = (JSON.parse(readFileSync(path.join(SERVER_SRC, '..', '..', '..', 'node_modules', '@modelcontextprotocol', 'server', 'package.json'), 'utf8')) as { version: string }).version;
const INTERNALS = /_serverInfo|_getRequestHandler|resolveScopeChallenge|fallbackRequestHandler|\.execution\s*=/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('the SDK seams of @mcp-tasks/server', { timeout: 30_000 }, () => {
  it('nothing in the package outside src/sdk/ names an SDK internal', () => {
    const outside = sourceFiles(SERVER_SRC).filter((file) => !file.startsWith(path.join(SERVER_SRC, 'sdk') + path.sep));
    assert.ok(outside.length > 20, 'the package sources were found');
    const offenders = outside.filter((file) => INTERNALS.test(readFileSync(file, 'utf8'))).map((file) => path.relative(SERVER_SRC, file));
    assert.deepEqual(offenders, []);
  });

  it('the installed SDK has every seam: McpTasks constructs', async () => {
    await new McpTasks().close();
  });

  it('an SDK without a seam is refused with the seam and the SDK version named', () => {
    const server = new McpServer({ name: 'tampered', version: '0.0.0' });
    (server.server as unknown as Record<string, unknown>)['_getRequestHandler'] = undefined;
    Reflect.deleteProperty(server, 'resolveScopeChallenge');
    assert.throws(
      () => checkSdkSeams(server),
      (error: unknown) => {
        assert.ok(error instanceof SdkSeamMissingError);
        assert.equal(error.sdkVersion, SDK_VERSION);
        assert.deepEqual(error.missing, ['Server._getRequestHandler', 'McpServer.resolveScopeChallenge']);
        assert.match(error.message, new RegExp(`@modelcontextprotocol/server ${SDK_VERSION.replaceAll('.', '\\.')}: it lacks Server._getRequestHandler, McpServer.resolveScopeChallenge`));
        return true;
      },
    );
  });
});
