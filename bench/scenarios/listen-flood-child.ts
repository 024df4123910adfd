// The attacker of scenario 10, in a process of its own so that its loops never delay the victim's
// reads in the measuring process: LOOPS listen loops on URL as TOKEN for DURATION_MS, each
// listen naming IDS unknown task ids and held HOLD_MS after its ack. Prints one JSON line of counts.
import { closedLoopFor } from '../support/concurrency.js';
import { listenOnce, unknownTaskId, type FloodCounts } from '../support/listen-flood.js';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const url = env('URL');
const token = env('TOKEN');
const ids = Number(env('IDS'));
const holdMs = Number(env('HOLD_MS'));
const counts: FloodCounts = { acked: 0, refused: 0, errors: 0 };
await closedLoopFor(Number(env('LOOPS')), Number(env('DURATION_MS')), () => listenOnce(url, token, Array.from({ length: ids }, unknownTaskId), holdMs, counts));
process.stdout.write(`${JSON.stringify(counts)}\n`);
process.exit(0);
