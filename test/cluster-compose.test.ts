import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from './support/demo-process.js';

// No Docker engine runs where the tests run: this checks that docker-compose.yml and the nginx
// configuration agree with what the demo node reads and where the build puts it.
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { image?: string; command?: string[]; environment?: Record<string, string>; volumes?: string[]; ports?: string[]; depends_on?: Record<string, unknown> }>;
};
const nodeNames = Object.keys(compose.services).filter((name) => /^node-\d+$/.test(name));
const configSource = readFileSync(path.join(ROOT, 'packages/demo/src/config.ts'), 'utf8');
const envNamesReadByTheDemo = new Set([...configSource.matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map((match) => match[1]!));

describe('docker-compose.yml', () => {
  it('has PostgreSQL, three nodes and a load balancer', () => {
    assert.ok(compose.services['postgres']?.image?.startsWith('postgres:'));
    assert.deepEqual(nodeNames, ['node-1', 'node-2', 'node-3']);
    assert.ok(compose.services['lb']);
  });

  for (const name of ['node-1', 'node-2', 'node-3']) {
    it(`${name} runs the built demo node with the environment the demo reads`, () => {
      const service = compose.services[name]!;
      assert.equal(service.image, 'node:20');
      const command = service.command!.join(' ');
      const entry = /node (packages\/demo\/dist\/node\/main\.js)/.exec(command)?.[1];
      assert.ok(entry, command);
      assert.ok(existsSync(path.join(ROOT, entry)), `${entry} is built (npm install runs tsc -b)`);
      assert.match(command, /npm ci/);
      const env = service.environment!;
      for (const key of Object.keys(env)) assert.ok(envNamesReadByTheDemo.has(key), `${key} is read by packages/demo/src/config.ts`);
      assert.equal(env['NODE_ID'], name);
      assert.equal(env['HOST'], '0.0.0.0');
      assert.equal(env['PORT'], '3000');
      assert.ok(Number(env['MCP_TASKS_LEASE_MS']) >= 100);
      const db = new URL(env['DATABASE_URL']!);
      const pg = compose.services['postgres']!.environment!;
      assert.equal(db.hostname, 'postgres');
      assert.equal(db.username, pg['POSTGRES_USER']);
      assert.equal(db.password, pg['POSTGRES_PASSWORD']);
      assert.equal(db.pathname, `/${pg['POSTGRES_DB']}`);
      assert.ok(service.depends_on?.['postgres']);
    });
  }

  it('the load balancer targets every node service on its PORT and publishes 3000', () => {
    const lb = compose.services['lb']!;
    const mount = lb.volumes!.find((volume) => volume.endsWith(':/etc/nginx/nginx.conf:ro'))!;
    const confPath = path.join(ROOT, mount.split(':')[0]!);
    assert.ok(existsSync(confPath));
    const conf = readFileSync(confPath, 'utf8');
    const servers = [...conf.matchAll(/^\s*server\s+([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`);
    assert.deepEqual(
      servers.sort(),
      nodeNames.map((name) => `${name}:${compose.services[name]!.environment!['PORT']}`).sort(),
    );
    const listen = /listen\s+(\d+);/.exec(conf)?.[1];
    assert.ok(lb.ports!.includes(`3000:${listen}`));
    assert.match(conf, /proxy_buffering off;/, 'SSE responses pass unbuffered');
    for (const name of nodeNames) assert.ok(lb.depends_on?.[name]);
  });
});
