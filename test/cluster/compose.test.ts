import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from '../support/demo-process.js';

// No Docker engine runs where the tests run: this checks, statically, that the Dockerfile,
// docker-compose.yml and the nginx configuration agree with what the demo node reads, what the
// build produces and what the repository holds.
interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
}
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const nodeNames = Object.keys(compose.services).filter((name) => /^node-\d+$/.test(name));
const configSource = readFileSync(path.join(ROOT, 'packages/gateway/src/config.ts'), 'utf8');
const envNamesReadByTheDemo = new Set([...configSource.matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map((match) => match[1]!));

/** The Dockerfile as stages of [instruction, arguments] (continuation lines joined, comments dropped). */
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((line) => line.trim() && !line.trim().startsWith('#'))
  .map((line) => /^\s*(\w+)\s+(.*)$/.exec(line)!.slice(1) as [string, string]);
const stages: { name: string; base: string; steps: [string, string][] }[] = [];
for (const [instruction, args] of dockerfile) {
  if (instruction === 'FROM') {
    const [base, , name] = args.split(/\s+/);
    stages.push({ name: name ?? '', base: base!, steps: [] });
  } else stages.at(-1)!.steps.push([instruction, args]);
}
const [buildStage, runtimeStage] = [stages[0]!, stages.at(-1)!];
const dockerignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((line) => line.trim());

describe('Dockerfile', () => {
  it('builds in one stage and runs in another, from the same Node major the project supports', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    for (const stage of stages) assert.match(stage.base, /^node:20[.-]/);
    assert.equal(buildStage.name, 'build');
  });

  it('the build stage copies files that exist, installs with dev dependencies and builds, then keeps production dependencies only', () => {
    for (const [instruction, args] of buildStage.steps.filter(([i]) => i === 'COPY')) {
      const sources = args.split(/\s+/).slice(0, -1);
      for (const source of sources) assert.ok(existsSync(path.join(ROOT, source)), `${instruction} ${source}`);
    }
    const runs = buildStage.steps.filter(([i]) => i === 'RUN').map(([, args]) => args);
    assert.ok(runs.some((run) => /npm ci\b/.test(run) && !/--omit=dev/.test(run)), 'npm ci with dev dependencies (tsc runs in prepare)');
    const prepare: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.prepare;
    assert.match(prepare, /tsc -b/);
    // `npm ci` runs prepare: every file it runs must be in the image by then.
    const copied = buildStage.steps.filter(([i]) => i === 'COPY').flatMap(([, args]) => args.split(/\s+/).slice(0, -1));
    for (const file of prepare.match(/scripts\/[\w.-]+/g) ?? []) {
      assert.ok(copied.some((source) => file === source || file.startsWith(`${source.replace(/\/$/, '')}/`)), `${file} (run by prepare) is copied`);
    }
    assert.ok(runs.some((run) => /npm prune --omit=dev/.test(run)), 'dev dependencies pruned');
    for (const ignored of ['**/node_modules', '**/dist']) assert.ok(dockerignore.includes(ignored), `.dockerignore has ${ignored}`);
  });

  it('the runtime stage copies the build stage\'s output, runs as a non-root user and starts a built demo node', () => {
    const copies = runtimeStage.steps.filter(([i]) => i === 'COPY').map(([, args]) => args);
    assert.ok(copies.length > 0 && copies.every((args) => args.includes('--from=build')), 'nothing but the build output');
    assert.ok(!runtimeStage.steps.some(([i, args]) => i === 'RUN' && /npm (ci|install)/.test(args)), 'no install at run time');
    const user = runtimeStage.steps.filter(([i]) => i === 'USER').at(-1)?.[1];
    assert.ok(user && user !== 'root' && user !== '0', `USER ${user}`);
    const command = JSON.parse(runtimeStage.steps.find(([i]) => i === 'CMD')![1]) as string[];
    assert.equal(command[0], 'node');
    assert.ok(existsSync(path.join(ROOT, command[1]!)), `${command[1]} is built (npm install runs tsc -b)`);
  });

  it('its health check asks the node\'s readiness endpoint', () => {
    const check = runtimeStage.steps.find(([i]) => i === 'HEALTHCHECK')![1];
    assert.match(check, /\/readyz/);
    assert.match(readFileSync(path.join(ROOT, 'packages/gateway/src/http/edge.ts'), 'utf8'), /'\/readyz'/);
  });
});

describe('docker-compose.yml', () => {
  it('has PostgreSQL, a one-shot migration, three nodes and a load balancer, every long-running one with a restart policy', () => {
    assert.ok(compose.services['postgres']?.image?.startsWith('postgres:'));
    assert.deepEqual(nodeNames, ['node-1', 'node-2', 'node-3']);
    assert.ok(compose.services['lb']);
    assert.ok(compose.services['migrate']);
    for (const name of ['postgres', 'lb', ...nodeNames]) assert.match(compose.services[name]!.restart ?? '', /^(always|unless-stopped|on-failure)/, name);
    assert.equal(compose.services['migrate']!.restart, 'no');
  });

  it('the migration runs the built migrate command once PostgreSQL is healthy', () => {
    const migrate = compose.services['migrate']!;
    assert.deepEqual(migrate.build, { context: '.', dockerfile: 'Dockerfile' });
    assert.ok(existsSync(path.join(ROOT, migrate.command![1]!)), `${migrate.command![1]} is built`);
    assert.equal(migrate.command![2], 'migrate');
    assert.equal(migrate.depends_on?.['postgres']?.condition, 'service_healthy');
    assert.equal(migrate.environment!['DATABASE_URL'], compose.services['node-1']!.environment!['DATABASE_URL']);
  });

  for (const name of ['node-1', 'node-2', 'node-3']) {
    it(`${name} runs the image the Dockerfile builds, after the migration, with the environment the demo reads`, () => {
      const service = compose.services[name]!;
      assert.deepEqual(service.build, { context: '.', dockerfile: 'Dockerfile' });
      assert.equal(service.image, compose.services['migrate']!.image);
      assert.equal(service.volumes, undefined, 'no source mounted: the image holds the build');
      const command = service.command!.join(' ');
      assert.doesNotMatch(command, /npm (ci|install)/);
      const [, entry, config] = /^node (packages\/gateway\/dist\/bin\/main\.js) --config (packages\/demo\/gateway\.yaml)$/.exec(command) ?? [];
      assert.ok(entry && existsSync(path.join(ROOT, entry)) && config && existsSync(path.join(ROOT, config)), command);
      const env = service.environment!;
      for (const key of Object.keys(env)) assert.ok(envNamesReadByTheDemo.has(key), `${key} is read by packages/gateway/src/config.ts`);
      assert.equal(env['NODE_ID'], name);
      assert.equal(env['HOST'], '0.0.0.0');
      assert.equal(env['PORT'], '3000');
      assert.equal(env['MCP_TASKS_MIGRATE'], 'false', 'the migrate service ran them');
      assert.ok(Number(env['MCP_TASKS_LEASE_MS']) >= 100);
      const db = new URL(env['DATABASE_URL']!);
      const pg = compose.services['postgres']!.environment!;
      assert.equal(db.hostname, 'postgres');
      assert.equal(db.username, pg['POSTGRES_USER']);
      assert.equal(db.password, pg['POSTGRES_PASSWORD']);
      assert.equal(db.pathname, `/${pg['POSTGRES_DB']}`);
      assert.equal(service.depends_on?.['postgres']?.condition, 'service_healthy');
      assert.equal(service.depends_on?.['migrate']?.condition, 'service_completed_successfully');
    });
  }
});

describe('deploy/nginx.conf', () => {
  const lb = compose.services['lb']!;
  const mount = lb.volumes!.find((volume) => volume.endsWith(':/etc/nginx/nginx.conf:ro'))!;
  const conf = readFileSync(path.join(ROOT, mount.split(':')[0]!), 'utf8').replace(/#.*$/gm, '');
  const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(conf)!;

  it('targets every node service on its PORT, publishes 3000, and waits for healthy nodes', () => {
    const servers = [...upstream[2]!.matchAll(/^\s*server\s+([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`);
    assert.deepEqual(servers.sort(), nodeNames.map((name) => `${name}:${compose.services[name]!.environment!['PORT']}`).sort());
    const listen = /listen\s+(\d+);/.exec(conf)?.[1];
    assert.ok(lb.ports!.includes(`3000:${listen}`));
    assert.match(conf, new RegExp(`proxy_pass\\s+http://${upstream[1]};`));
    assert.match(conf, /proxy_buffering off;/, 'SSE responses pass unbuffered');
    for (const name of nodeNames) assert.equal(lb.depends_on?.[name]?.condition, 'service_healthy');
  });

  it('re-resolves the node names through Docker\'s DNS, so a recreated node is found again', () => {
    assert.match(conf, /resolver\s+127\.0\.0\.11\b[^;]*\bvalid=\d+s/);
    assert.match(upstream[2]!, /^\s*zone\s+\w+\s+\d+k;/m, 'resolve needs a shared-memory zone');
    for (const line of upstream[2]!.split('\n').filter((l) => /^\s*server\s/.test(l))) assert.match(line, /\sresolve\b/, line);
    // `resolve` in an upstream block is in open-source nginx from 1.27.3.
    const [major, minor, patch = 0] = /^nginx:(\d+)\.(\d+)(?:\.(\d+))?/.exec(lb.image!)!.slice(1).map(Number) as [number, number, number?];
    assert.ok(major > 1 || minor > 27 || (minor === 27 && patch >= 3), lb.image);
  });

  it('keeps connections to the nodes alive, limits request bodies, and does not publish /metrics', () => {
    assert.match(upstream[2]!, /^\s*keepalive\s+\d+;/m);
    assert.match(conf, /proxy_http_version 1\.1;/);
    assert.match(conf, /proxy_set_header Connection "";/);
    const size = /client_max_body_size\s+(\d+)m;/.exec(conf)?.[1];
    assert.ok(size && Number(size) <= 4, 'no larger than the node\'s own 4 MiB limit');
    assert.match(conf, /location\s*=\s*\/metrics\s*\{\s*(return 404|deny all);/);
  });
});
