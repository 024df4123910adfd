import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { InputMethod, InputRequest, InputResponse, InputResponses } from '../input/input-request.js';
import { assertJsonObject } from '../json/assert-json-object.js';
import { hasLoneSurrogate, toWellFormed, truncateText } from '../json/unicode-text.js';
import { isWellFormedTaskId } from '../task/task-id.js';
import { assertTaskOwner } from '../task/task-owner.js';
import type { NewTask } from '../task/task-record.js';
import { isTaskStatus } from '../task/task-status.js';
import type { TaskOutcome, TaskRef } from './task-store.js';
import { TASK_LIMITS } from './task-limits.js';

// Both stores call these before they touch storage, so the contract suite can hold them to one
// behaviour: a typed error, and nothing written.

export function validateRef(ref: TaskRef): void {
  if (!isWellFormedTaskId(ref?.taskId)) throw new InvalidTaskValueError('taskId must be a string of URL-safe characters');
  assertTaskOwner(ref.owner);
}

export function validateNewTask(task: NewTask): void {
  validateRef(task);
  if (typeof task.tool !== 'string' || task.tool === '' || task.tool.length > TASK_LIMITS.maxToolNameLength) {
    throw new InvalidTaskValueError(`tool must be a non-empty string of at most ${TASK_LIMITS.maxToolNameLength} characters`);
  }
  if (!Array.isArray(task.scopes) || task.scopes.length > TASK_LIMITS.maxScopes || !task.scopes.every((s) => typeof s === 'string')) {
    throw new InvalidTaskValueError(`scopes must be an array of at most ${TASK_LIMITS.maxScopes} strings`);
  }
  if (hasLoneSurrogate(task.tool) || task.scopes.some(hasLoneSurrogate)) {
    throw new InvalidTaskValueError('tool and scopes must be valid Unicode text (no lone UTF-16 surrogate)');
  }
  if (task.ttlMs !== null && !(Number.isSafeInteger(task.ttlMs) && task.ttlMs > 0)) {
    throw new InvalidTaskValueError('ttlMs must be a positive integer or null');
  }
  if (!(Number.isSafeInteger(task.pollIntervalMs) && task.pollIntervalMs > 0)) {
    throw new InvalidTaskValueError('pollIntervalMs must be a positive integer');
  }
  if (task.nodeId !== null && typeof task.nodeId !== 'string') throw new InvalidTaskValueError('nodeId must be a string or null');
  if (task.args !== undefined) validateJsonValue(task.args, 'args', TASK_LIMITS.maxArgsBytes);
  if (task.clientCapabilities != null) assertJsonObject(task.clientCapabilities, 'clientCapabilities', TASK_LIMITS.maxInputBytes);
  if (task.resumable !== undefined && typeof task.resumable !== 'boolean') throw new InvalidTaskValueError('resumable must be a boolean');
  if (task.maxAttempts !== undefined && !(Number.isSafeInteger(task.maxAttempts) && task.maxAttempts > 0 && task.maxAttempts <= 1_000)) {
    throw new InvalidTaskValueError('maxAttempts must be an integer from 1 to 1000');
  }
}

/** Checks a value a store keeps as JSON (arguments, a step's result): any JSON value, within `maxBytes`. */
export function validateJsonValue(value: unknown, what: string, maxBytes: number): void {
  assertJsonObject({ value }, what, maxBytes);
}

/** Checks a step name: a non-empty string, unique per task like input keys. */
export function validateStepName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '' || name.length > TASK_LIMITS.maxInputKeyLength || hasLoneSurrogate(name)) {
    throw new InvalidTaskValueError(`step name must be a non-empty string of at most ${TASK_LIMITS.maxInputKeyLength} characters of valid Unicode text`);
  }
}

/** Checks the claim a durable-work operation writes under. */
export function validateClaim(claim: unknown): void {
  const c = claim as { nodeId?: unknown; attempt?: unknown } | null;
  if (typeof c?.nodeId !== 'string' || c.nodeId === '' || !Number.isSafeInteger(c.attempt)) {
    throw new InvalidTaskValueError('claim must be { nodeId: non-empty string, attempt: integer }');
  }
}

/**
 * Cuts a status message to the stored limit (never inside a surrogate pair) and replaces lone
 * surrogates with U+FFFD: a progress message is display text, not worth failing a run over.
 * Refuses a non-string.
 */
export function normaliseStatusMessage(message: unknown): string {
  if (typeof message !== 'string') throw new InvalidTaskValueError('statusMessage must be a string');
  return toWellFormed(truncateText(message, TASK_LIMITS.maxStatusMessageLength));
}

export function validateOutcome(outcome: TaskOutcome): void {
  const status: unknown = outcome?.status;
  if (!isTaskStatus(status)) throw new InvalidTaskValueError(`unknown task status: ${String(status)}`);
  if (status === 'completed') {
    assertJsonObject((outcome as { result: unknown }).result, 'result', TASK_LIMITS.maxResultBytes);
    return;
  }
  if (status === 'failed') {
    const failed = outcome as { error: unknown; statusMessage: unknown };
    validateRpcError(failed.error);
    normaliseStatusMessage(failed.statusMessage);
    return;
  }
  throw new InvalidTaskValueError(`a task cannot be finished as ${status}`);
}

function validateRpcError(error: unknown): asserts error is JsonRpcErrorObject {
  const object = assertJsonObject(error, 'error', TASK_LIMITS.maxResultBytes);
  if (!Number.isSafeInteger(object['code'])) throw new InvalidTaskValueError('error.code must be an integer');
  if (typeof object['message'] !== 'string') throw new InvalidTaskValueError('error.message must be a string');
}

const INPUT_METHODS: readonly InputMethod[] = ['elicitation/create', 'sampling/createMessage', 'roots/list'];

export function validateInputRequest(key: string, request: InputRequest): void {
  validateInputKey(key);
  assertJsonObject(request, `input request ${key}`, TASK_LIMITS.maxInputBytes);
  if (!INPUT_METHODS.includes(request.method)) {
    throw new InvalidTaskValueError(`input request ${key} has unknown method ${String(request.method)}`);
  }
  assertJsonObject(request.params, `input request ${key} params`, TASK_LIMITS.maxInputBytes);
}

export function validateInputKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '' || key.length > TASK_LIMITS.maxInputKeyLength) {
    throw new InvalidTaskValueError(`input key must be a non-empty string of at most ${TASK_LIMITS.maxInputKeyLength} characters`);
  }
  if (hasLoneSurrogate(key)) throw new InvalidTaskValueError('input key holds a lone UTF-16 surrogate, which is not valid Unicode text');
}

/** Checks the shape of `tasks/update`'s `inputResponses`: an object of JSON objects. */
export function validateInputResponses(responses: unknown): asserts responses is InputResponses {
  const object = assertJsonObject(responses, 'inputResponses', TASK_LIMITS.maxInputKeys * TASK_LIMITS.maxInputBytes);
  for (const [key, value] of Object.entries(object)) {
    validateInputKey(key);
    assertJsonObject(value, `inputResponses.${key}`, TASK_LIMITS.maxInputBytes);
  }
}

/**
 * Checks one answer against the request it answers: the client's answer is untrusted input that
 * the tool will read as a typed result.
 */
export function validateInputResponse(key: string, request: InputRequest, response: InputResponse): void {
  const where = `inputResponses.${key}`;
  switch (request.method) {
    case 'elicitation/create': {
      const action = response['action'];
      if (action !== 'accept' && action !== 'decline' && action !== 'cancel') {
        throw new InvalidTaskValueError(`${where}.action must be "accept", "decline" or "cancel"`);
      }
      const content = response['content'];
      if (content !== undefined && (typeof content !== 'object' || content === null || Array.isArray(content))) {
        throw new InvalidTaskValueError(`${where}.content must be an object`);
      }
      return;
    }
    case 'sampling/createMessage': {
      if (response['role'] !== 'assistant' && response['role'] !== 'user') {
        throw new InvalidTaskValueError(`${where}.role must be "assistant" or "user"`);
      }
      if (typeof response['content'] !== 'object' || response['content'] === null) {
        throw new InvalidTaskValueError(`${where}.content must be a content block or an array of them`);
      }
      if (typeof response['model'] !== 'string') throw new InvalidTaskValueError(`${where}.model must be a string`);
      return;
    }
    case 'roots/list': {
      const roots = response['roots'];
      if (!Array.isArray(roots) || !roots.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r) && typeof r['uri'] === 'string')) {
        throw new InvalidTaskValueError(`${where}.roots must be an array of { uri } objects`);
      }
      return;
    }
  }
}
