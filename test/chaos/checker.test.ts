// The soak's checker catches each kind of violation planted in a small history, and a history
// that keeps every promise passes (a checker that cannot fail, or that cries wolf, is a defect).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { check } from './checker.js';
import type { FinalRow, HistoryEvent, LiveRow, Numbered, RpcEvent } from './history.js';
import { minimise } from './minimise.js';
import { PROMISES } from './checker.js';

const RUN: HistoryEvent = {
  kind: 'run',
  t: 0,
  seed: 1,
  minutes: 1,
  nodes: 3,
  nodeNames: ['chaos-1', 'chaos-2', 'chaos-3'],
  leaseMs: 3_000,
  maxPerPrincipal: 2,
  owners: [
    { label: 'alice', sub: 'alice' },
    { label: 'bob', sub: 'bob' },
  ],
};

function rpc(t0: number, method: string, params: Record<string, any>, reply: { result?: Record<string, any>; error?: any }, owner = 'alice', rev: '2026' | '2025' = '2026'): RpcEvent {
  return { kind: 'rpc', t0, t1: t0 + 10, client: `c-${owner}`, owner, rev, node: 'chaos-1', method, params, status: 200, ...reply };
}

const create = (t: number, id: string, name: string, args: Record<string, unknown> = {}, owner = 'alice') => rpc(t, 'tools/call', { name, arguments: args }, { result: { resultType: 'task', taskId: id, status: 'working' } }, owner);
const get = (t: number, id: string, status: string, owner = 'alice') => rpc(t, 'tasks/get', { taskId: id }, { result: { taskId: id, status } }, owner);
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

function row(id: string, fields: Partial<FinalRow> = {}): HistoryEvent {
  return {
    kind: 'final-row',
    row: {
      id,
      owner_subject: 'alice',
      owner_key: 'alice-key',
      tool: 'slow_compute',
      status: 'completed',
      result: text('Computed result after 1s'),
      error: null,
      node_id: 'chaos-1/aaaa',
      attempt: 1,
      handovers: 0,
      max_attempts: 3,
      resumable: false,
      expired: false,
      updated: 500,
      lease_live: true,
      ...fields,
    },
  };
}

const sample = (t: number, live: LiveRow[]): HistoryEvent => ({ kind: 'sample', t, live });
const steps = (id: string, list: [string, number, boolean][]): HistoryEvent[] => list.map(([name, starts, done]) => ({ kind: 'final-step', task_id: id, name, starts, done }));

function numbered(events: HistoryEvent[]): Numbered[] {
  return [RUN, ...events, { kind: 'end', t: 100_000 }].map((event, i) => ({ seq: i + 1, ...event }) as Numbered);
}

/** The promises a history breaks. */
function broken(events: HistoryEvent[]): string[] {
  return [...new Set(check(numbered(events)).violations.map((v) => v.promise))].sort();
}

const EXPORT_ARGS = { project: 'p', files: 3, delayMs: 100 };
// Each run of an export that got to export journals `run-<attempt>`; by default one run per start of its busiest file.
const exportSteps = (id: string, starts: number[] = [1, 1, 1], runs = Math.max(...starts)) =>
  steps(id, [...Array.from({ length: runs }, (_, i): [string, number, boolean] => [`run-${i + 1}`, 1, true]), ...starts.map((n, i): [string, number, boolean] => [`file-${i + 1}`, n, true])]);

describe('the chaos checker', () => {
  it('passes a history that keeps every promise', () => {
    const events: HistoryEvent[] = [
      create(0, 't1', 'slow_compute', { seconds: 1 }),
      get(100, 't1', 'working'),
      get(300, 't1', 'completed'),
      rpc(400, 'tasks/get', { taskId: 't1' }, { result: { taskId: 't1', status: 'completed', result: text('Computed result after 1s') } }),
      rpc(450, 'tasks/get', { taskId: 't1' }, { error: { code: -32602, message: 'Task not found' } }, 'bob'),
      create(500, 't2', 'confirm_delete', { filename: 'a.txt' }),
      get(600, 't2', 'input_required'),
      rpc(700, 'tasks/update', { taskId: 't2', inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } }, { result: { resultType: 'complete' } }),
      create(800, 't3', 'export', EXPORT_ARGS),
      rpc(900, 'tasks/cancel', { taskId: 't3' }, { result: { resultType: 'complete' } }),
      get(1_000, 't3', 'cancelled'),
      create(1_100, 't4', 'export', EXPORT_ARGS),
      create(1_150, 't5', 'slow_compute', { seconds: 1 }),
      sample(1_200, [{ id: 't4', owner_key: 'alice-key', status: 'working', node_id: 'chaos-2/bbbb' }]),
      { kind: 'fault', t: 1_300, fault: 'sigkill', node: 'chaos-2', until: 2_000 },
      sample(20_000, [{ id: 't4', owner_key: 'alice-key', status: 'working', node_id: 'chaos-1/aaaa' }]),
      row('t1', { updated: 250 }),
      row('t2', { tool: 'confirm_delete', result: text('Deleted a.txt.') }),
      row('t3', { tool: 'export', status: 'cancelled', resumable: true, result: null }),
      row('t4', { tool: 'export', resumable: true, attempt: 2, result: text('Exported 3 of 3 files. (resumed 1 time, 1 files redone)') }),
      row('t5', { status: 'working', result: null, node_id: null, lease_live: false }),
      ...steps('t3', [['file-1', 1, true]]),
      ...exportSteps('t4', [1, 2, 1]),
    ];
    const verdict = check(numbered(events));
    assert.deepEqual(verdict.violations, []);
    for (const promise of verdict.promises) assert.ok(promise.checked > 0, `${promise.name} checked something`);
  });

  it('catches two terminal statuses, two results, and a read that sees a terminal task live again', () => {
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), get(100, 't1', 'completed'), get(200, 't1', 'failed'), row('t1')]), ['one-terminal-status']);
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), get(100, 't1', 'completed'), get(200, 't1', 'working'), row('t1')]), ['one-terminal-status']);
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), get(100, 't1', 'cancelled'), row('t1')]), ['one-terminal-status']);
    const readResult = rpc(100, 'tasks/get', { taskId: 't1' }, { result: { taskId: 't1', status: 'completed', result: text('Computed result after 2s') } });
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), readResult, row('t1')]), ['one-terminal-status']);
  });

  it('catches an acknowledged answer the task did not end with', () => {
    const answered = (confirm: boolean) =>
      rpc(200, 'tasks/update', { taskId: 't1', inputResponses: { confirm: { action: 'accept', content: { confirm } } } }, { result: { resultType: 'complete' } });
    const history = [create(0, 't1', 'confirm_delete', { filename: 'a.txt' }), get(100, 't1', 'input_required'), answered(true)];
    assert.deepEqual(broken([...history, row('t1', { tool: 'confirm_delete', result: text('Kept a.txt.') })]), ['answer-used']);
    assert.deepEqual(broken([...history, row('t1', { tool: 'confirm_delete', status: 'failed', result: null, error: { code: -32603, message: 'x' } })]), ['answer-used']);
    // Its run lost with its node (not resumable): documented, so allowed.
    const lost = { code: -32603, message: 'The server running this task stopped (node chaos-1/aaaa lease expired)' };
    assert.deepEqual(broken([...history, row('t1', { tool: 'confirm_delete', status: 'failed', result: null, error: lost })]), []);
    // Cancelled after the answer: the promise allows it.
    assert.deepEqual(broken([...history, row('t1', { tool: 'confirm_delete', status: 'cancelled', result: null })]), []);
  });

  it("catches a 2025-11-25 answer to a tasks/result stream's request that the task did not end with", () => {
    // The 1.x client's answer: a bare JSON-RPC response POSTed to any node, acknowledged by 202.
    const answered = rpc(200, 'input/response', { taskId: 't1', inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } }, { result: {} }, 'alice', '2025');
    const history = [create(0, 't1', 'confirm_delete', { filename: 'a.txt' }), answered];
    assert.deepEqual(broken([...history, row('t1', { tool: 'confirm_delete', result: text('Kept a.txt.') })]), ['answer-used']);
    assert.deepEqual(broken([...history, row('t1', { tool: 'confirm_delete', result: text('Deleted a.txt.') })]), []);
    // Refused (not 202): not an acknowledged answer, so nothing is owed.
    const refused = rpc(200, 'input/response', answered.params, { error: { code: -32600, message: 'x' } }, 'alice', '2025');
    assert.deepEqual(broken([create(0, 't1', 'confirm_delete', { filename: 'a.txt' }), refused, row('t1', { tool: 'confirm_delete', result: text('Kept a.txt.') })]), []);
  });

  it('catches an acknowledged cancel that the task outlived', () => {
    const cancel = rpc(100, 'tasks/cancel', { taskId: 't1' }, { result: { resultType: 'complete' } });
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), cancel, get(200, 't1', 'working'), row('t1', { updated: 150 })]), ['cancel-wins']);
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), cancel, row('t1', { updated: 5_000 })]), ['cancel-wins']);
    const legacyCancel = rpc(100, 'tasks/cancel', { taskId: 't1' }, { result: { taskId: 't1', status: 'cancelled' } }, 'alice', '2025');
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), legacyCancel, row('t1', { updated: 50 })]), ['cancel-wins', 'one-terminal-status']);
    // Finished before the cancel arrived: the cancel changes nothing, and that is kept.
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), cancel, row('t1', { updated: 90 })]), []);
  });

  it('catches a step redone within one run and an export whose suffix disagrees with its journal', () => {
    const done = (result: string, attempt: number) => row('t1', { tool: 'export', resumable: true, attempt, result: text(result) });
    const start = create(0, 't1', 'export', EXPORT_ARGS);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files.', 1), ...exportSteps('t1', [1, 2, 1])]), ['journal-agrees']);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files. (resumed 1 times, 0 files redone)', 2), ...exportSteps('t1', [1, 2, 1])]), ['journal-agrees']);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files. (resumed 2 times, 1 files redone)', 2), ...exportSteps('t1', [1, 2, 1])]), ['journal-agrees']);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files.', 1), ...steps('t1', [['file-1', 1, true], ['file-3', 1, true]])]), ['journal-agrees']);
    // A park for the confirmation and the claim of its answer raise the attempt, not the runs.
    assert.deepEqual(broken([start, done('Exported 3 of 3 files.', 2), ...exportSteps('t1', [1, 1, 1], 1)]), []);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files. (resumed 1 time, 0 files redone)', 2), ...exportSteps('t1', [1, 1, 1], 1)]), ['journal-agrees']);
    // A run lost while journaling its run step (started, not done) got to export: the next one resumed it (seed 4101).
    const lostInRunStep = steps('t1', [['run-1', 1, false], ['run-2', 1, true], ['file-1', 1, true], ['file-2', 1, true], ['file-3', 1, true]]);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files. (resumed 1 time, 0 files redone)', 2), ...lostInRunStep]), []);
    assert.deepEqual(broken([start, done('Exported 3 of 3 files.', 2), ...lostInRunStep]), ['journal-agrees']);
  });

  it('catches a resumable export that the runtime ended with part of its files, or failed with attempts left', () => {
    const start = create(0, 't1', 'export', EXPORT_ARGS);
    assert.deepEqual(broken([start, row('t1', { tool: 'export', resumable: true, result: text('Exported 2 of 3 files.') }), ...exportSteps('t1', [1, 1])]), ['resumable-finishes']);
    assert.deepEqual(broken([start, row('t1', { tool: 'export', resumable: true, status: 'failed', result: null, error: { code: -32603, message: 'lost' } })]), ['resumable-finishes']);
    assert.deepEqual(broken([start, row('t1', { tool: 'export', resumable: true, status: 'failed', attempt: 3, result: null, error: { code: -32603, message: 'The task failed after 3 attempts' } })]), []);
  });

  it("catches a dead node's task still on it past the lease and the bound", () => {
    const live = (nodeId: string): LiveRow[] => [{ id: 't1', owner_key: 'alice-key', status: 'working', node_id: nodeId }];
    const history = [create(0, 't1', 'slow_compute'), sample(900, live('chaos-2/bbbb')), { kind: 'fault', t: 1_000, fault: 'sigkill', node: 'chaos-2', until: 2_000 } as HistoryEvent];
    assert.deepEqual(broken([...history, sample(20_000, live('chaos-2/bbbb')), row('t1')]), ['lost-node-taken-over']);
    // A database outage in between extends the bound by its length.
    const outage: HistoryEvent = { kind: 'fault', t: 2_000, fault: 'pg-restart-immediate', until: 12_000 };
    assert.deepEqual(broken([...history, outage, sample(20_000, live('chaos-2/bbbb')), row('t1')]), []);
    assert.deepEqual(broken([...history, sample(20_000, live('chaos-2/cccc')), row('t1')]), []);
    // So does the time every other node was out (nobody left to take over).
    const othersOut: HistoryEvent[] = [
      { kind: 'fault', t: 500, fault: 'sigkill', node: 'chaos-1', until: 12_000 },
      { kind: 'fault', t: 800, fault: 'sigstop', node: 'chaos-3', until: 10_000 },
    ];
    assert.deepEqual(broken([...history, ...othersOut, sample(20_000, live('chaos-2/bbbb')), row('t1')]), []);
    assert.deepEqual(broken([...history, ...othersOut, sample(30_000, live('chaos-2/bbbb')), row('t1')]), ['lost-node-taken-over']);
  });

  it("catches an owner that sees, answers or cancels another owner's task, a list or a notification that shows one, and a row with the wrong owner", () => {
    const start = create(0, 't1', 'slow_compute');
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      assert.deepEqual(broken([start, rpc(100, method, { taskId: 't1' }, { result: { resultType: 'complete', status: 'working' } }, 'bob'), row('t1')]), ['owner-isolation'], method);
    }
    assert.deepEqual(broken([start, rpc(100, 'tasks/list', {}, { result: { tasks: [{ taskId: 't1', status: 'working' }] } }, 'bob', '2025'), row('t1')]), ['owner-isolation']);
    assert.deepEqual(broken([start, { kind: 'notification', t: 100, client: 'c-bob', owner: 'bob', node: 'chaos-1', taskId: 't1', status: 'completed' }, row('t1')]), ['owner-isolation']);
    assert.deepEqual(broken([start, row('t1', { owner_subject: 'bob' })]), ['owner-isolation']);
  });

  it('catches an owner over its quota', () => {
    const live = ['t1', 't2', 't3'].map((id) => ({ id, owner_key: 'alice-key', status: 'working', node_id: null }));
    assert.deepEqual(broken([sample(100, live)]), ['quota-held']);
    assert.deepEqual(broken([sample(100, live.slice(0, 2))]), []);
  });

  it('catches a created task the database does not hold', () => {
    assert.deepEqual(broken([create(0, 't1', 'slow_compute')]), ['created-task-exists']);
  });

  it('catches an unfinished task held by a node whose lease is gone', () => {
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), row('t1', { status: 'working', result: null, lease_live: false })]), ['unfinished-is-held']);
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), row('t1', { status: 'working', result: null, node_id: null, lease_live: false })]), []);
  });

  it('catches a node process that exited without being told to', () => {
    const crash: HistoryEvent = { kind: 'node-crash', t: 500, node: 'chaos-2', code: 1, signal: null, output: 'Error: Connection terminated unexpectedly' };
    assert.deepEqual(broken([crash]), ['node-survives']);
    // A kill the schedule ordered is no crash.
    assert.deepEqual(broken([{ kind: 'fault', t: 500, fault: 'sigkill', node: 'chaos-2', until: 900 }]), []);
    // A crashed node's tasks are a lost node's: taken over within the lease and the bound.
    const live: LiveRow[] = [{ id: 't1', owner_key: 'alice-key', status: 'working', node_id: 'chaos-2/bbbb' }];
    const restarted: HistoryEvent = { kind: 'fault', t: 500, fault: 'supervisor-restart', node: 'chaos-2', until: 3_000 };
    assert.deepEqual(broken([create(0, 't1', 'slow_compute'), sample(400, live), crash, restarted, sample(20_000, live), row('t1')]), ['lost-node-taken-over', 'node-survives']);
  });

  it('minimises a violation to the events that show it', () => {
    const events = numbered([
      create(0, 't1', 'slow_compute'),
      create(10, 't2', 'slow_compute'),
      get(100, 't1', 'working'),
      get(200, 't1', 'completed'),
      get(250, 't2', 'completed'),
      get(300, 't1', 'working'),
      get(400, 't1', 'completed'),
      row('t1'),
      row('t2'),
    ]);
    const [violation] = check(events).violations;
    assert.equal(violation?.promise, 'one-terminal-status');
    const excerpt = minimise(events, violation!, PROMISES.find((p) => p.name === violation!.promise)!);
    // The run line, the task's creation, the terminal read and the live read after it: nothing else is needed.
    assert.deepEqual(
      excerpt.map((e) => (e.kind === 'rpc' ? `${e.method}:${e.result?.['status']}@${e.t0}` : e.kind)),
      ['run', 'tools/call:working@0', 'tasks/get:completed@200', 'tasks/get:working@300'],
    );
  });
});
