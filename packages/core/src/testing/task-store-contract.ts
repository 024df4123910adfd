import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { StoredBytesExceededError } from '../errors/stored-bytes-exceeded-error.js';
import { storedBytesOf } from '../store/stored-bytes.js';
import type { InputRequest } from '../input/input-request.js';
import type { TaskEvents } from '../store/task-events.js';
import type { TaskOutcome, TaskRef, TaskStore } from '../store/task-store.js';
import { newTaskId } from '../task/task-id.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { NewTask, TaskRecord } from '../task/task-record.js';
import { TASK_LIMITS } from '../store/task-limits.js';

/** A store under test and how to release it. */
export interface StoreUnderTest {
  readonly store: TaskStore;
  /** Where the store's changes are heard: its own `events` by default; a node beside a shared store. */
  readonly events?: TaskEvents;
  /** The node id the lifecycle table's runs claim as (default `RUNNER`): the node whose runs {@link loseRuns} loses. */
  readonly runner?: string;
  /**
   * Loses every run of {@link runner} the way the store's cluster does (a store of one process
   * has no lost runs and leaves it out: the table's `lose` cases are skipped for it).
   */
  loseRuns?(): Promise<void>;
  close(): Promise<void>;
}

const ELICIT: InputRequest = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
};
const ROOTS: InputRequest = { method: 'roots/list', params: {} };
const RESULT = { content: [{ type: 'text', text: 'done' }] };
const DONE: TaskOutcome = { status: 'completed', result: RESULT };

/**
 * The behaviour every {@link TaskStore} must have, as node:test tests. Both shipped stores run it;
 * a custom store should too:
 *
 * ```ts
 * runTaskStoreContract('MyStore', async () => ({ store: new MyStore(), close: async () => {} }));
 * ```
 */
export function runTaskStoreContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`TaskStore contract: ${name}`, () => {
    let subject: StoreUnderTest;
    let store: TaskStore;
    let events: TaskEvents;
    before(async () => {
      subject = await makeStore();
      store = subject.store;
      const given = subject.events ?? store.events;
      if (!given) throw new Error(`${name}: give the events that deliver the store's changes`);
      events = given;
    });
    after(async () => {
      await subject.close();
    });

    const newOwner = (overrides: Partial<TaskOwner> = {}): TaskOwner => ({
      subject: `user-${randomUUID()}`,
      server: 'contract',
      clientId: 'client-1',
      resource: 'https://mcp.example/mcp',
      ...overrides,
    });
    const newTask = (owner: TaskOwner, overrides: Partial<NewTask> = {}): NewTask => ({
      taskId: newTaskId(),
      owner,
      tool: 'export',
      scopes: ['export'],
      ttlMs: 60_000,
      pollIntervalMs: 1_000,
      nodeId: 'node-a',
      ...overrides,
    });
    const created = async (overrides: Partial<NewTask> = {}): Promise<TaskRef> => {
      const task = newTask(newOwner(), overrides);
      await store.create(task, { maxLive: Infinity });
      return { taskId: task.taskId, owner: task.owner };
    };

    describe('creation', () => {
      test('a created task reads back as working with what it was created with', async () => {
        const task = newTask(newOwner());
        const record = await store.create(task, { maxLive: Infinity });
        assert.equal(record.status, 'working');
        const read = await store.get(task);
        assert.ok(read);
        assert.equal(read.taskId, task.taskId);
        assert.deepEqual(read.owner, task.owner);
        assert.equal(read.tool, 'export');
        assert.deepEqual([...read.scopes], ['export']);
        assert.equal(read.ttlMs, 60_000);
        assert.equal(read.pollIntervalMs, 1_000);
        assert.equal(read.nodeId, 'node-a');
        assert.equal(read.expiresAt?.getTime(), read.createdAt.getTime() + 60_000);
        assert.equal(read.result, null);
        assert.equal(read.error, null);
      });

      test('a task with ttlMs null never expires', async () => {
        const ref = await created({ ttlMs: null });
        const read = await store.get(ref);
        assert.equal(read?.ttlMs, null);
        assert.equal(read?.expiresAt, null);
      });

      test('an unknown id reads as absent', async () => {
        assert.equal(await store.get({ taskId: newTaskId(), owner: newOwner() }), undefined);
      });

      test('mutating a returned record changes nothing stored', async () => {
        const ref = await created();
        const read = await store.get(ref);
        (read as { status: string }).status = 'completed';
        assert.equal((await store.get(ref))?.status, 'working');
      });
    });

    describe("a reader's read", () => {
      /** The snapshot of a record: what `read` must give for the same task. */
      const snapshotOf = (record: TaskRecord, withInputs: boolean) => ({
        taskId: record.taskId,
        scopes: [...record.scopes],
        status: record.status,
        statusMessage: record.statusMessage,
        createdAt: record.createdAt,
        lastUpdatedAt: record.lastUpdatedAt,
        ttlMs: record.ttlMs,
        pollIntervalMs: record.pollIntervalMs,
        inputs: withInputs ? record.inputs : {},
        result: record.result,
        error: record.error,
      });
      const sameSnapshot = async (ref: TaskRef) => {
        const [record, snapshot] = [await store.get(ref), await store.read(ref)];
        assert.ok(record && snapshot, 'read finds the task get finds');
        const withInputs = record.status === 'input_required';
        const actual = { ...snapshotOf(snapshot as TaskRecord, true), inputs: withInputs ? snapshot.inputs : {} };
        assert.deepEqual(actual, snapshotOf(record, withInputs));
      };

      test('read gives what get gives of a working, waiting, answered and finished task', async () => {
        const ref = await created({ statusMessage: 'starting' });
        await sameSnapshot(ref);
        await store.requestInput(ref, 'second', ELICIT);
        await store.requestInput(ref, 'first', { ...ELICIT, params: { ...ELICIT.params, message: 'First?' } });
        await sameSnapshot(ref);
        assert.deepEqual(Object.keys((await store.read(ref))!.inputs), ['second', 'first'], 'inputs in the order they were asked');
        await store.answerInput(ref, { second: { action: 'accept', content: { name: 'x' } } });
        await sameSnapshot(ref);
        await store.finish(ref, DONE);
        await sameSnapshot(ref);
        assert.deepEqual((await store.read(ref))?.result, RESULT);
      });

      test('read finds nothing of an unknown, foreign or expired task', async () => {
        const ref = await created({ ttlMs: 1 });
        const other = await created();
        assert.equal(await store.read({ taskId: newTaskId(), owner: newOwner() }), undefined);
        assert.equal(await store.read({ taskId: other.taskId, owner: newOwner() }), undefined, "another owner's task");
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(await store.read(ref), undefined, 'an expired task');
        assert.equal(await store.get(ref), undefined);
      });
    });

    describe('terminal statuses are final', () => {
      test('a completed task keeps its result whatever is written after', async () => {
        const ref = await created();
        const done = await store.finish(ref, DONE);
        assert.equal(done?.status, 'completed');
        assert.deepEqual(done?.result, RESULT);
        assert.equal(await store.finish(ref, { status: 'failed', error: { code: -32603, message: 'late' }, statusMessage: 'late' }), undefined);
        assert.equal(await store.setStatusMessage(ref, 'late progress'), undefined);
        const cancelled = await store.cancel(ref);
        assert.equal(cancelled?.status, 'completed');
        const read = await store.get(ref);
        assert.equal(read?.status, 'completed');
        assert.deepEqual(read?.result, RESULT);
        assert.equal(read?.statusMessage, null);
      });

      test('a cancelled task ignores a completion and progress that arrive later', async () => {
        const ref = await created();
        assert.equal((await store.cancel(ref))?.status, 'cancelled');
        assert.equal(await store.finish(ref, DONE), undefined);
        assert.equal(await store.setStatusMessage(ref, '3/10'), undefined);
        const read = await store.get(ref);
        assert.equal(read?.status, 'cancelled');
        assert.equal(read?.result, null);
        assert.equal(read?.statusMessage, null);
      });

      test('a failed task stores the JSON-RPC error and its status message', async () => {
        const ref = await created();
        const error = { code: -32000, message: 'upstream refused', data: { retryAfter: 5 } };
        await store.finish(ref, { status: 'failed', error, statusMessage: 'Tool execution failed: upstream refused' });
        const read = await store.get(ref);
        assert.equal(read?.status, 'failed');
        assert.deepEqual(read?.error, error);
        assert.equal(read?.statusMessage, 'Tool execution failed: upstream refused');
        assert.equal((await store.cancel(ref))?.status, 'failed');
      });

      test('of concurrent finishes and a cancel exactly one wins', async () => {
        const ref = await created();
        const results = await Promise.all([
          store.finish(ref, DONE),
          store.cancel(ref),
          store.finish(ref, { status: 'failed', error: { code: -32603, message: 'x' }, statusMessage: 'x' }),
        ]);
        const final = await store.get(ref);
        assert.ok(final && ['completed', 'cancelled', 'failed'].includes(final.status));
        const finishWins = results.filter((r, i) => i !== 1 && r !== undefined).length;
        assert.equal(finishWins + (results[1]?.status === 'cancelled' && final.status === 'cancelled' ? 1 : 0), 1);
      });
    });

    describe('progress', () => {
      test('progress sets the status message of a live task and moves lastUpdatedAt forward', async () => {
        const ref = await created();
        const before = (await store.get(ref))!.lastUpdatedAt.getTime();
        await new Promise((resolve) => setTimeout(resolve, 5));
        const updated = await store.setStatusMessage(ref, '2/10');
        assert.equal(updated?.statusMessage, '2/10');
        assert.equal(updated?.status, 'working');
        assert.ok(updated!.lastUpdatedAt.getTime() > before);
      });

      test('a status message with a lone surrogate is stored with U+FFFD in its place, and a cut never splits a pair', async () => {
        const ref = await created();
        assert.equal((await store.setStatusMessage(ref, 'x\ud800y'))?.statusMessage, 'x\ufffdy');
        assert.equal((await store.get(ref))?.statusMessage, 'x\ufffdy');
        const long = `${'a'.repeat(TASK_LIMITS.maxStatusMessageLength - 1)}\u{1F600}`;
        const cut = (await store.setStatusMessage(ref, long))?.statusMessage;
        assert.equal(cut, 'a'.repeat(TASK_LIMITS.maxStatusMessageLength - 1));
        assert.equal((await store.get(ref))?.statusMessage, cut);
      });
    });

    describe('input', () => {
      test('asking a key moves the task to input_required with the key outstanding', async () => {
        const ref = await created();
        assert.deepEqual(await store.requestInput(ref, 'name', ELICIT), { state: 'pending' });
        const read = await store.get(ref);
        assert.equal(read?.status, 'input_required');
        assert.deepEqual(read?.inputs['name']?.request, ELICIT);
        assert.equal(read?.inputs['name']?.response, undefined);
        assert.deepEqual(await store.readInput(ref, 'name'), { state: 'pending' });
      });

      test('an answer is recorded once and the task goes back to working', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        const first = { action: 'accept', content: { name: 'Luca' } };
        const answered = await store.answerInput(ref, { name: first });
        assert.deepEqual([...(answered?.accepted ?? [])], ['name']);
        assert.equal(answered?.task.status, 'working');
        assert.deepEqual(await store.readInput(ref, 'name'), { state: 'answered', response: first });
        const again = await store.answerInput(ref, { name: { action: 'accept', content: { name: 'Other' } } });
        assert.deepEqual([...(again?.accepted ?? [])], []);
        assert.deepEqual((await store.get(ref))?.inputs['name']?.response, first);
      });

      test('asking an answered key again returns the first answer and changes nothing', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        const first = { action: 'accept', content: { name: 'Luca' } };
        await store.answerInput(ref, { name: first });
        const before = await store.get(ref);
        const ask = await store.requestInput(ref, 'name', { ...ELICIT, params: { ...ELICIT.params, message: 'Different?' } });
        assert.deepEqual(ask, { state: 'answered', response: first });
        const after = await store.get(ref);
        assert.equal(after?.status, 'working');
        assert.deepEqual(after?.inputs, before?.inputs);
      });

      test('asking an outstanding key again keeps the first request', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        await store.requestInput(ref, 'name', { ...ELICIT, params: { ...ELICIT.params, message: 'Different?' } });
        assert.deepEqual((await store.get(ref))?.inputs['name']?.request, ELICIT);
      });

      test('a partial answer keeps the task input_required with only the remaining keys', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        await store.requestInput(ref, 'dirs', ROOTS);
        const partial = await store.answerInput(ref, { name: { action: 'accept', content: { name: 'Luca' } } });
        assert.deepEqual([...(partial?.accepted ?? [])], ['name']);
        assert.equal(partial?.task.status, 'input_required');
        const read = await store.get(ref);
        assert.equal(read?.status, 'input_required');
        assert.equal(read?.inputs['dirs']?.response, undefined);
        assert.ok(read?.inputs['name']?.response);
        const rest = await store.answerInput(ref, { dirs: { roots: [{ uri: 'file:///tmp' }] } });
        assert.equal(rest?.task.status, 'working');
      });

      test('answers to unknown keys are ignored and change nothing', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        const before = await store.get(ref);
        const answered = await store.answerInput(ref, { nope: { action: 'accept', content: {} } });
        assert.deepEqual([...(answered?.accepted ?? [])], []);
        const after = await store.get(ref);
        assert.equal(after?.status, 'input_required');
        assert.deepEqual(after?.inputs, before?.inputs);
      });

      test('an answer that does not fit its request is refused and nothing is stored', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        await store.requestInput(ref, 'dirs', ROOTS);
        await assert.rejects(
          store.answerInput(ref, { name: { action: 'accept', content: { name: 'Luca' } }, dirs: { roots: 'nope' } }),
          InvalidTaskValueError,
        );
        const read = await store.get(ref);
        assert.equal(read?.status, 'input_required');
        assert.equal(read?.inputs['name']?.response, undefined);
        assert.equal(read?.inputs['dirs']?.response, undefined);
      });

      test('a terminal task asks nothing and accepts no answers', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        await store.cancel(ref);
        assert.deepEqual(await store.requestInput(ref, 'other', ELICIT), { state: 'ended', status: 'cancelled' });
        assert.deepEqual(await store.readInput(ref, 'name'), { state: 'ended', status: 'cancelled' });
        const answered = await store.answerInput(ref, { name: { action: 'accept', content: {} } });
        assert.deepEqual([...(answered?.accepted ?? [])], []);
        assert.equal((await store.get(ref))?.inputs['name']?.response, undefined);
      });

      test('a cancel and an answer are signalled to watchers of the task', async () => {
        const ref = await created();
        const signals: string[] = [];
        const unwatch = events.watch(ref.taskId, (signal) => signals.push(signal.kind));
        try {
          // A store with a separate listener may need a moment to start listening.
          await new Promise((resolve) => setTimeout(resolve, 100));
          await store.requestInput(ref, 'name', ELICIT);
          await store.answerInput(ref, { name: { action: 'accept', content: { name: 'x' } } });
          await store.cancel(ref);
          await waitFor(() => signals.includes('input') && signals.includes('cancelled'));
        } finally {
          unwatch();
        }
      });

      test('control states show status and outstanding keys in one read', async () => {
        const a = await created();
        const b = await created();
        await store.requestInput(b, 'name', ELICIT);
        const gone = { taskId: newTaskId(), owner: newOwner() };
        const states = await store.controlStates([a, b, gone]);
        assert.deepEqual(states.get(a.taskId), { status: 'working', claim: { nodeId: 'node-a', attempt: 1 }, outstandingKeys: [] });
        assert.deepEqual(states.get(b.taskId), { status: 'input_required', claim: { nodeId: 'node-a', attempt: 1 }, outstandingKeys: ['name'] });
        assert.equal(states.has(gone.taskId), false);
      });
    });

    describe('following', () => {
      test('a follower hears every change of status and outstanding input', async () => {
        const ref = await created();
        let pings = 0;
        const seen: string[] = [];
        const unfollow = await events.follow(ref, () => {
          pings += 1;
          void store.get(ref).then((task) => seen.push(`${task?.status}:${Object.keys(task?.inputs ?? {}).join(',')}`));
        });
        assert.ok(unfollow);
        try {
          // A store with a separate listener may need a moment to start listening.
          await new Promise((resolve) => setTimeout(resolve, 100));
          const before = pings;
          await store.requestInput(ref, 'name', ELICIT);
          await waitFor(() => pings > before);
          const asked = pings;
          await store.requestInput(ref, 'dirs', ROOTS);
          await waitFor(() => pings > asked);
          const second = pings;
          await store.answerInput(ref, { name: { action: 'accept', content: { name: 'x' } }, dirs: { roots: [] } });
          await waitFor(() => pings > second);
          const answered = pings;
          await store.finish(ref, DONE);
          await waitFor(() => pings > answered && seen.some((s) => s.startsWith('completed')));
        } finally {
          unfollow();
        }
        const afterUnfollow = pings;
        await store.cancel(ref);
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(pings, afterUnfollow, 'no ping after unfollow');
      });

      test('a follower hears each progress message, and sees the intermediate ones', async () => {
        const ref = await created();
        const seen: string[] = [];
        let pings = 0;
        const unfollow = await events.follow(ref, () => {
          pings += 1;
          void store.get(ref).then((task) => task?.statusMessage && seen.push(task.statusMessage));
        });
        assert.ok(unfollow);
        try {
          await new Promise((resolve) => setTimeout(resolve, 100));
          for (const step of ['1/3', '2/3', '3/3']) {
            const before = pings;
            await store.setStatusMessage(ref, step);
            await waitFor(() => pings > before && seen.includes(step));
          }
          assert.deepEqual([...new Set(seen)], ['1/3', '2/3', '3/3']);
        } finally {
          unfollow?.();
        }
      });

      test('a cancel reaches followers', async () => {
        const ref = await created();
        let pinged = false;
        const unfollow = await events.follow(ref, () => (pinged = true));
        try {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await store.cancel(ref);
          await waitFor(() => pinged);
        } finally {
          unfollow?.();
        }
      });

      test('following many tasks at once follows the owner\'s visible ones with their records, and only those hear changes', async () => {
        const mine = await created();
        const followedBefore = await created({ owner: mine.owner });
        const foreign = await created();
        assert.ok(await events.follow(followedBefore, () => {}));
        const pinged = new Set<string>();
        const followed = await events.followMany(mine.owner, [mine.taskId, followedBefore.taskId, foreign.taskId, newTaskId(), mine.taskId], (taskId) => pinged.add(taskId));
        try {
          assert.deepEqual(followed.map((f) => f.record.taskId).sort(), [mine.taskId, followedBefore.taskId].sort());
          for (const { record } of followed) assert.equal(record.status, 'working');
          await new Promise((resolve) => setTimeout(resolve, 100));
          await store.cancel(mine);
          await store.cancel(followedBefore);
          await store.cancel(foreign);
          await waitFor(() => pinged.has(mine.taskId) && pinged.has(followedBefore.taskId));
          await new Promise((resolve) => setTimeout(resolve, 100));
          assert.equal(pinged.has(foreign.taskId), false, 'a foreign task is not followed');
        } finally {
          for (const { unfollow } of followed) unfollow();
        }
      });

      test('an unknown or foreign task cannot be followed', async () => {
        const ref = await created();
        assert.equal(await events.follow({ taskId: newTaskId(), owner: ref.owner }, () => {}), undefined);
        assert.equal(await events.follow({ taskId: ref.taskId, owner: { ...ref.owner, server: 'other' } }, () => {}), undefined);
      });
    });

    describe('expiry', () => {
      test('an expired task reads as absent everywhere at once, before any sweep', async () => {
        const ref = await created({ ttlMs: 150 });
        assert.ok(await store.get(ref));
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(await store.get(ref), undefined);
        assert.equal(await store.cancel(ref), undefined);
        assert.equal(await store.answerInput(ref, {}), undefined);
        assert.equal(await store.finish(ref, DONE), undefined);
        assert.equal(await store.setStatusMessage(ref, 'x'), undefined);
        assert.deepEqual(await store.readInput(ref, 'k'), { state: 'ended', status: null });
        assert.equal((await store.controlStates([ref])).size, 0);
      });

      test('expired tasks do not count against the quota', async () => {
        const owner = newOwner();
        await store.create(newTask(owner, { ttlMs: 150 }), { maxLive: 1 });
        await assert.rejects(store.create(newTask(owner), { maxLive: 1 }), QuotaExceededError);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await store.create(newTask(owner), { maxLive: 1 });
      });
    });

    describe('listing', () => {
      test("an owner's list pages through its own tasks newest first, with expired and foreign tasks absent", async () => {
        const owner = newOwner();
        const ids: string[] = [];
        for (let i = 0; i < 5; i += 1) {
          const task = newTask(owner);
          await store.create(task, { maxLive: Infinity });
          ids.push(task.taskId);
          // Distinct creation times for most, so the order is by time; ties are broken by id.
          if (i % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const expiring = newTask(owner, { ttlMs: 150 });
        await store.create(expiring, { maxLive: Infinity });
        await store.create(newTask({ ...owner, subject: `${owner.subject}-other` }), { maxLive: Infinity });
        await new Promise((resolve) => setTimeout(resolve, 300));

        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.list(owner, { limit: 2, ...(cursor === undefined ? {} : { cursor }) });
          assert.ok(page.tasks.length <= 2);
          seen.push(...page.tasks.map((task) => task.taskId));
          cursor = page.nextCursor;
          pages += 1;
        } while (cursor !== undefined && pages < 10);
        assert.equal(pages, 3);
        assert.deepEqual(new Set(seen), new Set(ids));
        assert.equal(seen.length, ids.length);
        const records = await Promise.all(seen.map((taskId) => store.get({ taskId, owner })));
        for (let i = 1; i < records.length; i += 1) {
          const [newer, older] = [records[i - 1]!, records[i]!];
          const ordered = newer.createdAt.getTime() > older.createdAt.getTime() || (newer.createdAt.getTime() === older.createdAt.getTime() && newer.taskId > older.taskId);
          assert.ok(ordered, `${newer.taskId} (${newer.createdAt.toISOString()}) before ${older.taskId} (${older.createdAt.toISOString()})`);
        }
        assert.deepEqual((await store.list(newOwner())).tasks, []);
      });

      test('a cursor the store did not hand out is refused with -32602', async () => {
        const owner = newOwner();
        for (const cursor of ['', 'garbage', 'tp1.!!', `tp1.${Buffer.from('[1,"../x"]').toString('base64url')}`]) {
          await assert.rejects(store.list(owner, { cursor }), (error: Error & { code?: number }) => error.code === -32602, cursor);
        }
      });
    });

    describe('ownership', () => {
      const parts = ['subject', 'server', 'clientId', 'resource'] as const;
      for (const part of parts) {
        test(`a different ${part} finds nothing and changes nothing`, async () => {
          const ref = await created();
          await store.requestInput(ref, 'name', ELICIT);
          const stranger: TaskRef = { taskId: ref.taskId, owner: { ...ref.owner, [part]: `${ref.owner[part]}-other` } };
          assert.equal(await store.get(stranger), undefined);
          assert.equal(await store.cancel(stranger), undefined);
          assert.equal(await store.answerInput(stranger, { name: { action: 'accept', content: {} } }), undefined);
          assert.equal(await store.finish(stranger, DONE), undefined);
          assert.equal(await store.setStatusMessage(stranger, 'x'), undefined);
          assert.deepEqual(await store.requestInput(stranger, 'other', ELICIT), { state: 'ended', status: null });
          assert.equal((await store.controlStates([stranger])).size, 0);
          const read = await store.get(ref);
          assert.equal(read?.status, 'input_required');
          assert.deepEqual(Object.keys(read?.inputs ?? {}), ['name']);
        });
      }
    });

    describe('quota', () => {
      test('concurrent creations for one owner never exceed the limit', async () => {
        const owner = newOwner();
        const attempts = await Promise.allSettled(Array.from({ length: 24 }, () => store.create(newTask(owner), { maxLive: 5 })));
        const made = attempts.filter((a) => a.status === 'fulfilled').length;
        assert.equal(made, 5);
        for (const attempt of attempts) {
          if (attempt.status === 'rejected') assert.ok(attempt.reason instanceof QuotaExceededError, String(attempt.reason));
        }
      });

      test('a finished task frees its slot, and owners do not share a quota', async () => {
        const owner = newOwner();
        const first = newTask(owner);
        await store.create(first, { maxLive: 1 });
        await store.create(newTask(newOwner()), { maxLive: 1 });
        await store.create(newTask({ ...owner, clientId: 'another-client' }), { maxLive: 1 });
        await assert.rejects(store.create(newTask(owner), { maxLive: 1 }), QuotaExceededError);
        await store.finish(first, DONE);
        await store.create(newTask(owner), { maxLive: 1 });
      });
    });

    describe('stored bytes', () => {
      const padded = (owner: TaskOwner) => newTask(owner, { args: { padding: 'x'.repeat(10_000) } });

      test("concurrent creations never take an owner's pool past its bound; finished tasks still count, and owners do not share a pool", async () => {
        const owner = newOwner();
        const charge = storedBytesOf(padded(owner));
        const storage = { pool: 'owner', maxBytes: 5 * charge } as const;
        const attempts = await Promise.allSettled(Array.from({ length: 24 }, () => store.create(padded(owner), { maxLive: Infinity, storage })));
        const made = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
        assert.equal(made.length, 5);
        const refusal = attempts.find((a) => a.status === 'rejected')?.reason as StoredBytesExceededError;
        assert.ok(refusal instanceof StoredBytesExceededError && refusal instanceof QuotaExceededError, String(refusal));
        assert.equal(refusal.keptBytes, 5 * charge);
        assert.match(refusal.message, /maxStoredBytesPerOwner/);
        for (const task of made) await store.finish(task, DONE);
        await assert.rejects(store.create(padded(owner), { maxLive: Infinity, storage }), StoredBytesExceededError);
        await store.create(padded(newOwner()), { maxLive: Infinity, storage });
        await store.create(padded(owner), { maxLive: Infinity }); // no bound: nothing is checked
      });

      test('a large result is charged at its finish: the task finishes, and the next creation is refused', async () => {
        const owner = newOwner();
        const storage = { pool: 'owner', maxBytes: 3 * storedBytesOf(newTask(owner)) + 4_000 } as const;
        const task = await store.create(newTask(owner), { maxLive: Infinity, storage });
        const finished = await store.finish(task, { status: 'completed', result: { content: [{ type: 'text', text: 'y'.repeat(20_000) }] } });
        assert.equal(finished?.status, 'completed');
        await assert.rejects(store.create(newTask(owner), { maxLive: Infinity, storage }), StoredBytesExceededError);
      });

      test('the shared pool is one for every owner in it', async () => {
        const storage = { pool: 'shared', maxBytes: Number.MAX_SAFE_INTEGER } as const;
        // The shared pool spans the whole store: measure what it keeps now, then bound it just above.
        const probe = { pool: 'shared', maxBytes: 1 } as const;
        const kept = await store.create(padded(newOwner()), { maxLive: Infinity, storage: probe }).then(
          () => assert.fail('a 1-byte bound takes no task'),
          (error: unknown) => (error as StoredBytesExceededError).keptBytes,
        );
        const charge = storedBytesOf(padded(newOwner()));
        const bound = { pool: 'shared', maxBytes: kept + 2 * charge } as const;
        await store.create(padded(newOwner()), { maxLive: Infinity, storage: bound });
        await store.create(padded(newOwner()), { maxLive: Infinity, storage: bound });
        const refusal = await store.create(padded(newOwner()), { maxLive: Infinity, storage: bound }).catch((error: unknown) => error);
        assert.ok(refusal instanceof StoredBytesExceededError, String(refusal));
        assert.match(refusal.message, /maxStoredBytesWithoutSubject/);
        await store.create(padded(newOwner()), { maxLive: Infinity, storage });
      });
    });

    describe('bad input is refused with a typed error and writes nothing', () => {
      test('an unknown status', async () => {
        const ref = await created();
        await assert.rejects(store.finish(ref, { status: 'paused' } as unknown as TaskOutcome), InvalidTaskValueError);
        await assert.rejects(store.finish(ref, { status: 'cancelled' } as unknown as TaskOutcome), InvalidTaskValueError);
        assert.equal((await store.get(ref))?.status, 'working');
      });

      test('a result that is not JSON or too large', async () => {
        const ref = await created();
        const bad: unknown[] = [
          { content: [], when: new Date() },
          { content: [], n: Number.NaN },
          { content: [], f: () => 1 },
          { content: [], big: 'x'.repeat(5 * 1024 * 1024) },
          'not an object',
        ];
        for (const result of bad) {
          await assert.rejects(store.finish(ref, { status: 'completed', result } as TaskOutcome), InvalidTaskValueError);
        }
        const read = await store.get(ref);
        assert.equal(read?.status, 'working');
        assert.equal(read?.result, null);
      });

      test('an input request that is malformed', async () => {
        const ref = await created();
        await assert.rejects(store.requestInput(ref, '', ELICIT), InvalidTaskValueError);
        await assert.rejects(store.requestInput(ref, 'k', { method: 'tools/call', params: {} } as unknown as InputRequest), InvalidTaskValueError);
        await assert.rejects(store.requestInput(ref, 'k', { ...ELICIT, params: { big: 'x'.repeat(300 * 1024) } }), InvalidTaskValueError);
        const read = await store.get(ref);
        assert.equal(read?.status, 'working');
        assert.deepEqual(read?.inputs, {});
      });

      test('input responses that are not an object of objects', async () => {
        const ref = await created();
        await store.requestInput(ref, 'name', ELICIT);
        await assert.rejects(store.answerInput(ref, { name: 'yes' } as never), InvalidTaskValueError);
        await assert.rejects(store.answerInput(ref, [] as never), InvalidTaskValueError);
        assert.equal((await store.get(ref))?.inputs['name']?.response, undefined);
      });

      test('a value holding a lone UTF-16 surrogate, which is not Unicode text', async () => {
        const ref = await created();
        const lone = 'x\ud800y';
        await assert.rejects(store.finish(ref, { status: 'completed', result: { content: [{ type: 'text', text: lone }] } }), InvalidTaskValueError);
        await assert.rejects(store.finish(ref, { status: 'completed', result: { content: [], [lone]: 1 } }), InvalidTaskValueError);
        await assert.rejects(
          store.finish(ref, { status: 'failed', error: { code: -32603, message: lone }, statusMessage: 'failed' }),
          InvalidTaskValueError,
        );
        await assert.rejects(store.requestInput(ref, 'k', { ...ELICIT, params: { ...ELICIT.params, message: lone } }), InvalidTaskValueError);
        await assert.rejects(store.requestInput(ref, lone, ELICIT), InvalidTaskValueError);
        await store.requestInput(ref, 'name', ELICIT);
        await assert.rejects(store.answerInput(ref, { name: { action: 'accept', content: { name: lone } } }), InvalidTaskValueError);
        const read = await store.get(ref);
        assert.equal(read?.status, 'input_required');
        assert.equal(read?.result, null);
        assert.deepEqual(Object.keys(read!.inputs), ['name']);
        assert.equal(read?.inputs['name']?.response, undefined);
        await assert.rejects(store.create({ ...newTask(newOwner()), tool: lone }, { maxLive: Infinity }), InvalidTaskValueError);
      });

      test('a malformed owner or task id', async () => {
        const task = newTask(newOwner());
        await assert.rejects(store.create({ ...task, owner: { subject: 'x' } as TaskOwner }, { maxLive: Infinity }), InvalidTaskValueError);
        await assert.rejects(store.create({ ...task, owner: { ...task.owner, subject: '' } }, { maxLive: Infinity }), InvalidTaskValueError);
        await assert.rejects(store.create({ ...task, taskId: 'has spaces' }, { maxLive: Infinity }), InvalidTaskValueError);
        await assert.rejects(store.get({ taskId: 42 as unknown as string, owner: task.owner }), InvalidTaskValueError);
        assert.equal(await store.get(task), undefined);
      });

      test('a malformed new task', async () => {
        const task = newTask(newOwner());
        await assert.rejects(store.create({ ...task, ttlMs: -1 }, { maxLive: Infinity }), InvalidTaskValueError);
        await assert.rejects(store.create({ ...task, pollIntervalMs: 0 }, { maxLive: Infinity }), InvalidTaskValueError);
        await assert.rejects(store.create({ ...task, tool: '' }, { maxLive: Infinity }), InvalidTaskValueError);
        await assert.rejects(store.create({ ...task, scopes: [1] as unknown as string[] }, { maxLive: Infinity }), InvalidTaskValueError);
        assert.equal(await store.get(task), undefined);
      });

      test('a duplicate task id', async () => {
        const task = newTask(newOwner());
        await store.create(task, { maxLive: Infinity });
        await assert.rejects(store.create({ ...task, tool: 'other' }, { maxLive: Infinity }), InvalidTaskValueError);
        assert.equal((await store.get(task))?.tool, 'export');
      });
    });

    describe('durable work', () => {
      // Each test claims only its own tool, so tests never take each other's tasks.
      const tool = (): string => `tool-${randomUUID()}`;
      const queued = async (name: string, overrides: Partial<NewTask> = {}): Promise<TaskRef> => created({ tool: name, nodeId: null, ...overrides });

      test('a queued task is held by no run until a node claims it, and the claim is attempt 1', async () => {
        const name = tool();
        const ref = await queued(name, { args: { files: 3 }, clientCapabilities: { elicitation: { form: {} } }, resumable: true });
        const before = await store.get(ref);
        assert.deepEqual([before?.nodeId, before?.attempt, before?.status], [null, 0, 'working']);
        const claimed = await store.claim('node-b', [name]);
        assert.equal(claimed?.taskId, ref.taskId);
        assert.deepEqual([claimed.nodeId, claimed.attempt, claimed.resumable], ['node-b', 1, true]);
        assert.deepEqual(claimed.args, { files: 3 }, 'another node finds the arguments on the row');
        assert.deepEqual(claimed.clientCapabilities, { elicitation: { form: {} } }, 'and the creating request\'s capabilities');
        assert.equal(await store.claim('node-c', [name]), undefined, 'a held task is claimed by no one else');
      });

      test('a node claims only tools it names, and nothing terminal', async () => {
        const name = tool();
        const ref = await queued(name);
        assert.equal(await store.claim('node-b', [tool()]), undefined);
        await store.cancel(ref);
        assert.equal(await store.claim('node-b', [name]), undefined);
      });

      test('concurrent claimers never take the same task', async () => {
        const name = tool();
        const refs = await Promise.all(Array.from({ length: 8 }, () => queued(name)));
        const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => store.claim(`node-${i}`, [name])));
        const taken = claims.filter((claim) => claim !== undefined).map((claim) => claim.taskId);
        assert.equal(taken.length, 8);
        assert.deepEqual(new Set(taken), new Set(refs.map((ref) => ref.taskId)));
      });

      test('an owner with fewer held tasks is claimed first, however long another owner\'s backlog', async () => {
        const name = tool();
        const busy = newOwner();
        const quiet = newOwner();
        const backlog: string[] = [];
        for (let i = 0; i < 3; i += 1) {
          const task = newTask(busy, { tool: name, nodeId: null });
          await store.create(task, { maxLive: Infinity });
          backlog.push(task.taskId);
        }
        const late = newTask(quiet, { tool: name, nodeId: null });
        await store.create(late, { maxLive: Infinity });
        const first = await store.claim('node-b', [name]);
        assert.equal(first?.taskId, backlog[0], 'the oldest task goes first');
        const second = await store.claim('node-b', [name]);
        assert.equal(second?.taskId, late.taskId, 'then the owner with no task running, before the busy owner\'s backlog');
      });

      test('a released task is claimed again under the next attempt, and the hand-over is counted', async () => {
        const name = tool();
        const ref = await created({ tool: name, resumable: true });
        assert.equal(await store.release(ref, { nodeId: 'node-a', attempt: 2 }), undefined, 'a claim that does not hold the task releases nothing');
        const released = await store.release(ref, { nodeId: 'node-a', attempt: 1 });
        assert.deepEqual([released?.nodeId, released?.handovers, released?.status], [null, 1, 'working']);
        const again = await store.claim('node-a', [name]);
        assert.deepEqual([again?.nodeId, again?.attempt], ['node-a', 2]);
        assert.equal(await store.setStatusMessage(ref, 'stale', { nodeId: 'node-a', attempt: 1 }), undefined, 'the first run is fenced off');
      });

      test('a finished step returns its journaled result; an unfinished one counts its starts', async () => {
        const name = tool();
        const ref = await created({ tool: name, resumable: true });
        const first = { nodeId: 'node-a', attempt: 1 };
        assert.deepEqual(await store.beginStep(ref, first, 'file-1'), { state: 'run', starts: 1 });
        assert.equal(await store.finishStep(ref, first, 'file-1', { bytes: 10 }), true);
        assert.deepEqual(await store.beginStep(ref, first, 'file-2'), { state: 'run', starts: 1 });
        await store.release(ref, first);
        const second = { nodeId: 'node-b', attempt: (await store.claim('node-b', [name]))!.attempt };
        assert.deepEqual(await store.beginStep(ref, second, 'file-1'), { state: 'done', result: { bytes: 10 } });
        assert.deepEqual(await store.beginStep(ref, second, 'file-2'), { state: 'run', starts: 2 });
        assert.equal(await store.finishStep(ref, first, 'file-2', 'stale'), false, 'the superseded run journals nothing');
        assert.equal(await store.finishStep(ref, second, 'file-2', null), true);
        assert.deepEqual(await store.steps(ref), [
          { name: 'file-1', starts: 1, done: true },
          { name: 'file-2', starts: 2, done: true },
        ]);
        assert.deepEqual(await store.steps({ taskId: ref.taskId, owner: newOwner() }), [], 'another owner sees no journal');
        assert.deepEqual(await store.steps(ref, { results: true }), [
          { name: 'file-1', starts: 1, done: true, result: { bytes: 10 } },
          { name: 'file-2', starts: 2, done: true, result: null },
        ]);
      });

      test('a bad step name, claim or result is refused and journals nothing', async () => {
        const ref = await created();
        const claim = { nodeId: 'node-a', attempt: 1 };
        await assert.rejects(store.beginStep(ref, claim, ''), InvalidTaskValueError);
        await assert.rejects(store.beginStep(ref, { nodeId: 'node-a' } as never, 'x'), InvalidTaskValueError);
        await store.beginStep(ref, claim, 'x');
        await assert.rejects(store.finishStep(ref, claim, 'x', { n: Number.NaN }), InvalidTaskValueError);
        assert.deepEqual(await store.steps(ref), [{ name: 'x', starts: 1, done: false }]);
        await assert.rejects(store.create(newTask(newOwner(), { args: { f: () => 1 } as never }), { maxLive: Infinity }), InvalidTaskValueError);
      });
    });
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
