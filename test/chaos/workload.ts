// The soak's clients: owners with tokens and one without, of both revisions, doing what clients
// do (task calls of every demo tool, polls, answers and cancels on random nodes, follows,
// attempts at another owner's tasks), each client from a random source of its own.
import { listen } from '../support/notifications-client.js';
import type { ChaosNode } from './cluster.js';
import type { History, Revision } from './history.js';
import type { Random } from './random.js';
import { call, createdTaskId, resultStream, TERMINAL, type Caller } from './transport.js';

export interface Owner {
  readonly label: string;
  readonly token: string | undefined;
  /** The nodes that serve this owner (token owners: the nodes with the token table). */
  readonly nodes: readonly ChaosNode[];
}

export interface WorkloadOptions {
  readonly history: History;
  readonly owners: readonly Owner[];
  /** No new scenario starts after this instant. */
  readonly stopAt: number;
  /** Whatever is still polling gives up at this instant. */
  readonly giveUpAt: number;
}

interface Known {
  readonly taskId: string;
  readonly owner: Owner;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Workload {
  readonly #options: WorkloadOptions;
  /** Task ids seen so far, for the attempts at other owners' tasks. */
  readonly #known: Known[] = [];

  constructor(options: WorkloadOptions) {
    this.#options = options;
  }

  /** One client: scenarios one after the other until `stopAt`. */
  async client(name: string, random: Random, owner: Owner): Promise<void> {
    const caller: Caller = { client: name, owner: owner.label, token: owner.token };
    while (Date.now() < this.#options.stopAt) {
      // Each scenario draws from a source of its own, forked from the client's: however many
      // polls one took (that depends on timing), the client's next scenarios and their choices
      // are the same for the same seed.
      const own = random.fork();
      const pause = random.int(50, 400);
      await random.pick(SCENARIOS)(this, own, caller, owner);
      await sleep(pause);
    }
  }

  /** A burst of `count` task calls from one owner at once (the flood fault). */
  async flood(owner: Owner, count: number, random: Random): Promise<void> {
    const caller: Caller = { client: `flood-${owner.label}`, owner: owner.label, token: owner.token };
    await Promise.all(
      Array.from({ length: count }, async () => {
        const event = await this.call(caller, '2026', random.pick(owner.nodes), 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.3, label: 'flood' } });
        const taskId = createdTaskId(event);
        if (taskId) this.#known.push({ taskId, owner });
      }),
    );
  }

  get history(): History {
    return this.#options.history;
  }

  call(caller: Caller, rev: Revision, node: ChaosNode, method: string, params: Record<string, any>) {
    return call(this.#options.history, caller, rev, node, method, params);
  }

  async start(caller: Caller, owner: Owner, rev: Revision, random: Random, name: string, args: Record<string, unknown>): Promise<string | undefined> {
    const params = rev === '2026' ? { name, arguments: args } : { name, arguments: args, task: {} };
    const event = await this.call(caller, rev, random.pick(owner.nodes), 'tools/call', params);
    const taskId = createdTaskId(event);
    if (taskId) this.#known.push({ taskId, owner });
    return taskId;
  }

  /**
   * Polls `taskId` on random nodes until it is terminal (or `giveUpAt`); answers its input with
   * `answers` (in one update or one per key), and cancels it after `cancelAfterMs` if given.
   */
  async follow(
    caller: Caller,
    owner: Owner,
    rev: Revision,
    random: Random,
    taskId: string,
    plan: { answers?: Record<string, unknown>; split?: boolean; cancelAfterMs?: number },
  ): Promise<void> {
    const started = Date.now();
    let cancelled = false;
    const unanswered = new Set(Object.keys(plan.answers ?? {}));
    while (Date.now() < this.#options.giveUpAt) {
      await sleep(random.int(150, 600));
      if (plan.cancelAfterMs !== undefined && !cancelled && Date.now() - started >= plan.cancelAfterMs) {
        const reply = await this.call(caller, rev, random.pick(owner.nodes), 'tasks/cancel', { taskId });
        if (reply.result || reply.error) cancelled = true;
        continue;
      }
      const read = await this.call(caller, rev, random.pick(owner.nodes), 'tasks/get', { taskId });
      const status = read.result?.['status'];
      if (typeof status === 'string' && TERMINAL.has(status)) return;
      if (status === 'input_required' && unanswered.size > 0 && plan.answers) {
        const keys = plan.split ? [[...unanswered][0]!] : [...unanswered];
        const inputResponses = Object.fromEntries(keys.map((key) => [key, plan.answers![key]]));
        const reply = await this.call(caller, rev, random.pick(owner.nodes), 'tasks/update', { taskId, inputResponses });
        if (reply.result) for (const key of keys) unanswered.delete(key);
      }
    }
  }

  /** Follows `taskId` through subscriptions/listen (with another owner's task in the filter) while polling it. */
  async listenWhile(caller: Caller, owner: Owner, random: Random, taskId: string, work: Promise<void>): Promise<void> {
    const node = random.pick(owner.nodes);
    const foreign = this.foreignTask(owner, random);
    const ids = foreign ? [taskId, foreign.taskId] : [taskId];
    let stream: Awaited<ReturnType<typeof listen>> | undefined;
    try {
      stream = await Promise.race([
        listen(node.url, ids, owner.token ? { token: owner.token } : {}),
        sleep(10_000).then(() => {
          throw new Error('listen did not open');
        }),
      ]);
    } catch {
      stream = undefined;
    }
    await work;
    if (!stream) return;
    await Promise.race([stream.until((messages) => messages.some((m) => m['method'] === 'notifications/tasks' && TERMINAL.has(m['params']?.['status'])), 3_000).catch(() => {}), sleep(3_000)]);
    stream.abort();
    const t = Date.now();
    for (const task of stream.tasks()) {
      if (typeof task['taskId'] === 'string' && typeof task['status'] === 'string') {
        this.#options.history.add({ kind: 'notification', t, client: caller.client, owner: caller.owner, node: node.name, taskId: task['taskId'], status: task['status'] });
      }
    }
  }

  foreignTask(owner: Owner, random: Random): Known | undefined {
    const others = this.#known.filter((known) => known.owner.label !== owner.label);
    return others.length === 0 ? undefined : random.pick(others.slice(-50));
  }
}

type Scenario = (workload: Workload, random: Random, caller: Caller, owner: Owner) => Promise<void>;

const exportScenario: Scenario = async (w, random, caller, owner) => {
  const files = random.int(4, 24);
  const confirm = random.chance(0.3);
  const taskId = await w.start(caller, owner, '2026', random, 'export', { project: `p${random.int(1, 999)}`, files, delayMs: random.int(100, 300), confirm });
  if (!taskId) return;
  const answers = confirm ? { confirm: random.chance(0.8) ? { action: 'accept', content: { confirm: true } } : { action: 'decline' } } : undefined;
  const plan = { ...(answers ? { answers } : {}), ...(random.chance(0.2) ? { cancelAfterMs: random.int(300, 3000) } : {}) };
  const follow = w.follow(caller, owner, '2026', random, taskId, plan);
  if (random.chance(0.3)) await w.listenWhile(caller, owner, random, taskId, follow);
  else await follow;
};

const inputScenario: Scenario = async (w, random, caller, owner) => {
  const multi = random.chance(0.5);
  const taskId = multi
    ? await w.start(caller, owner, '2026', random, 'multi_input', {})
    : await w.start(caller, owner, '2026', random, 'confirm_delete', { filename: `f${random.int(1, 999)}.txt`, delayMs: random.int(0, 500) });
  if (!taskId) return;
  const answers: Record<string, unknown> = multi
    ? { name: { action: 'accept', content: { name: `n${random.int(1, 99)}` } }, confirm: random.chance(0.7) ? { action: 'accept', content: { confirm: true } } : { action: 'decline' } }
    : { confirm: { action: 'accept', content: { confirm: random.chance(0.6) } } };
  await w.follow(caller, owner, '2026', random, taskId, { answers, split: multi && random.chance(0.5), ...(random.chance(0.1) ? { cancelAfterMs: random.int(200, 2000) } : {}) });
};

const computeScenario: Scenario = async (w, random, caller, owner) => {
  const rev: Revision = random.chance(0.5) ? '2026' : '2025';
  const taskId = await w.start(caller, owner, rev, random, 'slow_compute', { seconds: random.int(1, 30) / 10 });
  if (!taskId) return;
  await w.follow(caller, owner, rev, random, taskId, random.chance(0.3) ? { cancelAfterMs: random.int(100, 2000) } : {});
};

const failingScenario: Scenario = async (w, random, caller, owner) => {
  const rev: Revision = random.chance(0.5) ? '2026' : '2025';
  const taskId = await w.start(caller, owner, rev, random, random.pick(['failing_job', 'protocol_error_job']), {});
  if (taskId) await w.follow(caller, owner, rev, random, taskId, {});
};

const legacyExportScenario: Scenario = async (w, random, caller, owner) => {
  const taskId = await w.start(caller, owner, '2025', random, 'export', { project: `l${random.int(1, 999)}`, files: random.int(3, 10), delayMs: random.int(100, 250) });
  if (!taskId) return;
  await w.follow(caller, owner, '2025', random, taskId, random.chance(0.25) ? { cancelAfterMs: random.int(300, 2500) } : {});
  await w.call(caller, '2025', random.pick(owner.nodes), 'tasks/list', {});
};

/**
 * The 1.x client's input path: a 2025-11-25 task whose input is asked on its `tasks/result`
 * stream (server-to-client requests) and answered by a bare JSON-RPC response POSTed to any node;
 * the stream is opened again (on another node) while the task is live, as a client that lost it does.
 */
const legacyInputScenario: Scenario = async (w, random, caller, owner) => {
  const taskId = await w.start(caller, owner, '2025', random, 'confirm_delete', { filename: `r${random.int(1, 999)}.txt`, delayMs: random.int(0, 300) });
  if (!taskId) return;
  const answer = { action: 'accept', content: { confirm: random.chance(0.6) } };
  const cancelAfterMs = random.chance(0.15) ? random.int(200, 1500) : undefined;
  const cancelling = cancelAfterMs === undefined ? undefined : sleep(cancelAfterMs).then(() => w.call(caller, '2025', random.pick(owner.nodes), 'tasks/cancel', { taskId }));
  for (let attempt = 0; attempt < 4; attempt++) {
    const final = await resultStream(w.history, caller, random.pick(owner.nodes), taskId, (key) => (key === 'confirm' ? answer : undefined), () => random.pick(owner.nodes));
    if (final.result || (final.error && final.error.code !== -32603 && final.error.code !== -32000)) break;
    await sleep(random.int(200, 600));
  }
  await cancelling;
};

/** Another owner's task: read, answered or cancelled by someone it does not belong to. */
const snoopScenario: Scenario = async (w, random, caller, owner) => {
  const victim = w.foreignTask(owner, random);
  if (!victim) return;
  const rev: Revision = random.chance(0.7) ? '2026' : '2025';
  const method = rev === '2026' ? random.pick(['tasks/get', 'tasks/update', 'tasks/cancel']) : random.pick(['tasks/get', 'tasks/cancel', 'tasks/result']);
  const params: Record<string, unknown> = { taskId: victim.taskId };
  if (method === 'tasks/update') params['inputResponses'] = { confirm: { action: 'accept', content: { confirm: false } } };
  await w.call(caller, rev, random.pick(owner.nodes), method, params);
};

const SCENARIOS: readonly Scenario[] = [exportScenario, exportScenario, inputScenario, inputScenario, computeScenario, failingScenario, legacyExportScenario, legacyInputScenario, snoopScenario];
