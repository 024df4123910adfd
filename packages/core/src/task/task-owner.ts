import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';

/**
 * Whoever a task belongs to, and what they created it through. Two owners are the same only when
 * all four parts are equal; any difference makes the task read as unknown.
 */
export interface TaskOwner {
  /** The token's subject when the endpoint has authorization, otherwise the host's scope. */
  readonly subject: string;
  /** The MCP server (by name) the task was created on; several servers may share one store. */
  readonly server: string;
  /** The OAuth client of the token ('' without authorization). */
  readonly clientId: string;
  /** The resource (audience) the token was issued for ('' when none). */
  readonly resource: string;
}

const MAX_PART_LENGTH = 1024;

/** Checks an owner handed to a store; a malformed one is a programming error, refused with a typed error. */
export function assertTaskOwner(owner: unknown): TaskOwner {
  if (typeof owner !== 'object' || owner === null) throw new InvalidTaskValueError('owner must be an object');
  const record = owner as Record<string, unknown>;
  for (const part of ['subject', 'server', 'clientId', 'resource'] as const) {
    const value = record[part];
    if (typeof value !== 'string') throw new InvalidTaskValueError(`owner.${part} must be a string`);
    if (value.length > MAX_PART_LENGTH) throw new InvalidTaskValueError(`owner.${part} is longer than ${MAX_PART_LENGTH} characters`);
  }
  if (record['subject'] === '') throw new InvalidTaskValueError('owner.subject must not be empty');
  if (record['server'] === '') throw new InvalidTaskValueError('owner.server must not be empty');
  return owner as TaskOwner;
}

/**
 * One string that identifies the owner: stores index and compare it, and the quota counts by it.
 * JSON encoding keeps the parts unambiguous whatever characters they contain.
 */
export function ownerKey(owner: TaskOwner): string {
  return JSON.stringify([owner.subject, owner.server, owner.clientId, owner.resource]);
}
