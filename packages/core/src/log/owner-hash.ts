import { createHash } from 'node:crypto';
import { ownerKey, type TaskOwner } from '../task/task-owner.js';

/**
 * How an owner appears in a log line: the first 16 hex digits of the SHA-256 of its key, the same
 * on every node, so a pipeline can follow one owner without the log holding their subject.
 */
export function ownerHash(owner: TaskOwner): string {
  return createHash('sha256').update(ownerKey(owner)).digest('hex').slice(0, 16);
}
