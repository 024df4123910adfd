// The flooder of scenario 12, in a process of its own so that its loops never delay the polite
// clients' reads in the measuring process: LOOPS loops of tasks/get of TASK_ID on URL (as TOKEN,
// when set) for DURATION_MS, each sending its next read as soon as the last is answered. Prints
// one JSON line of counts: answered, refused by an owner's limit (429), shed by the node (503).
import { closedLoopFor } from '../support/concurrency.js';
import { rpc } from '../support/mcp-client.js';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const url = env('URL');
const token = process.env['TOKEN'] || undefined;
const taskId = env('TASK_ID');
const counts = { answered: 0, ownerRefused: 0, nodeShed: 0, errors: 0 };
await closedLoopFor(Number(env('LOOPS')), Number(env('DURATION_MS')), async () => {
  try {
    const reply = await rpc(url, 'tasks/get', { taskId }, token);
    if (!reply.error) counts.answered += 1;
    else if (/^Server busy/.test(reply.error.message)) counts.nodeShed += 1;
    else counts.ownerRefused += 1;
  } catch {
    counts.errors += 1;
  }
});
process.stdout.write(`${JSON.stringify(counts)}\n`);
process.exit(0);
