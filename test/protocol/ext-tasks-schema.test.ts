// The schema check the raw clients run on every 2026-07-28 message can fail: the vendored official
// schema refuses what the spec forbids (a result without its `resultType`, a CreateTaskResult that
// says `complete`, an error without a code, a notification with a status that does not exist), and
// the server's real answers pass it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frameViolation, replyViolation } from '../support/ext-tasks-schema.js';

const task = { taskId: 't1', status: 'working', createdAt: '2026-12-01T00:00:00Z', lastUpdatedAt: '2026-12-01T00:00:00Z', ttlMs: 60_000, pollIntervalMs: 1_000 };
const reply = (result: unknown) => ({ jsonrpc: '2.0', id: 1, result });

describe('the ext-tasks 2026-07-28 schema check', () => {
  it('passes the answers the spec describes', () => {
    assert.equal(replyViolation('tasks/get', reply({ resultType: 'complete', ...task })), undefined);
    assert.equal(replyViolation('tasks/get', reply({ resultType: 'complete', ...task, status: 'completed', result: { content: [] } })), undefined);
    assert.equal(replyViolation('tasks/update', reply({ resultType: 'complete' })), undefined);
    assert.equal(replyViolation('tasks/cancel', reply({ resultType: 'complete' })), undefined);
    assert.equal(replyViolation('tools/call', reply({ resultType: 'task', ...task })), undefined);
    assert.equal(replyViolation('tasks/get', { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Failed to retrieve task: Task not found' } }), undefined);
    assert.equal(frameViolation({ jsonrpc: '2.0', method: 'notifications/tasks', params: task }), undefined);
  });

  it('refuses what the spec forbids, saying what', () => {
    assert.match(replyViolation('tasks/get', reply({ ...task })) ?? '', /GetTaskResult/, 'a tasks/get result without resultType');
    assert.match(replyViolation('tasks/update', reply({})) ?? '', /UpdateTaskResult/, 'an update ack without resultType');
    assert.match(replyViolation('tasks/get', reply({ resultType: 'complete', ...task, status: 'completed' })) ?? '', /GetTaskResult/, 'a completed task without its result');
    assert.match(replyViolation('tools/call', reply({ resultType: 'task', ...task, ttlMs: 'soon' })) ?? '', /CreateTaskResult/, 'a CreateTaskResult with a string ttlMs');
    assert.match(replyViolation('tasks/cancel', { jsonrpc: '2.0', id: 1, error: { message: 'no code' } }) ?? '', /Error/, 'an error without a code');
    assert.match(frameViolation({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, status: 'paused' } }) ?? '', /TaskStatusNotification/, 'a status that does not exist');
  });

  it('leaves alone what is not a JSON-RPC message of the extension', () => {
    assert.equal(replyViolation('tasks/get', { error: 'insufficient_scope', error_description: 'This task needs scope export' }), undefined, 'an OAuth refusal body');
    assert.equal(replyViolation('tools/call', reply({ content: [{ type: 'text', text: 'inline' }] })), undefined, 'an inline CallToolResult');
  });
});
