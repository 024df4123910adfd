// A scratch database for read-by-id.sh: this schema (migrated by the store), the hours the
// partitioner makes `hoursAhead` ahead, 8 tasks of one owner with a TTL of an hour whose ids name
// their hour. Prints, tab-separated for pgbench's variables: the first task's id, the owner key,
// the hour's bounds, then the 8 ids, owner keys and bounds as array literals. Needs `npm run build`.
import { newTaskId, ownerKey } from '../../../packages/core/dist/index.js';
import { PostgresTaskNode, PostgresTaskStore } from '../../../packages/postgres/dist/index.js';

const [url, hoursAhead = '3'] = process.argv.slice(2);
const store = await PostgresTaskStore.connect({ connectionString: url });
const node = new PostgresTaskNode(store, { partitions: { hoursAhead: Number(hoursAhead) }, lease: false, reaper: false, listener: false, rescuer: false, stats: false, testSignals: true });
await node.partitioner.runOnce();
// A create goes by a moved horizon a second after the round (migration 0032).
await new Promise((resolve) => setTimeout(resolve, 1_500));
const owner = { subject: 'reader', server: 'bench', clientId: 'client', resource: '' };
const expiresAt = Date.now() + 3_600_000;
const ids = [];
for (let i = 0; i < 8; i += 1) {
  const taskId = newTaskId(expiresAt);
  await store.create({ taskId, owner, tool: 'x', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: 'n' }, { maxLive: 100 });
  ids.push(taskId);
}
const hour = Math.floor(expiresAt / 3_600_000) * 3_600_000;
const [key, from, to] = [ownerKey(owner), new Date(hour).toISOString(), new Date(hour + 3_600_000).toISOString()];
const array = (value) => `{${ids.map(() => JSON.stringify(value)).join(',')}}`;
console.log([ids[0], key, from, to, `{${ids.join(',')}}`, array(key), array(from), array(to)].join('\t'));
await node.stop();
await store.close();
