import { randomBytes } from 'node:crypto';
import { ErrorCode } from '../errors/error-codes.js';
import { JsonRpcError, type JsonRpcErrorObject } from '../errors/json-rpc-error.js';

// An error that the runtime itself (or its store) raised inside a tool's call to the task
// context, as opposed to the tool's own error. A tool's own message is its result; the runtime's
// may carry internals (a connection string, a SQL fragment), so the client gets a generic message
// with a reference and the details go to the log under that reference.

const faults = new WeakSet<object>();

/** Marks `error` as the runtime's (JSON-RPC errors are deliberate answers and stay as they are); returns it. */
export function markRuntimeFault(error: unknown): unknown {
  if (typeof error === 'object' && error !== null && !(error instanceof JsonRpcError)) faults.add(error);
  return error;
}

/** Whether `error` was raised by the runtime or its store, not by the tool. */
export function isRuntimeFault(error: unknown): boolean {
  return typeof error === 'object' && error !== null && faults.has(error);
}

/** A fresh reference that ties a generic client message to the logged details. */
export function newErrorRef(): string {
  return randomBytes(6).toString('hex');
}

/** The error a task fails with for a runtime fault: generic, with the reference. */
export function internalErrorWithRef(ref: string): JsonRpcErrorObject {
  return { code: ErrorCode.InternalError, message: `Internal error (ref ${ref})` };
}
