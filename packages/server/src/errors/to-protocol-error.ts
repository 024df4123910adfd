import { defaultLogger, internalErrorWithRef, JsonRpcError, logSafe, newErrorRef } from '@mcp-tasks/core';
import { ProtocolError } from '@modelcontextprotocol/server';

/** Where the details of an internal error go; the client sees only its reference. */
export type InternalErrorReporter = (error: unknown, ref: string) => void;

const logInternalError: InternalErrorReporter = (error, ref) => defaultLogger().error({ ref, err: logSafe(error) }, 'internal error');

/**
 * The SDK error that answers a request with exactly the core error's code, message and data; the
 * SDK's own protocol errors stay as they are. Anything else (a PostgreSQL or JavaScript error)
 * may carry internals, so the client gets -32603 "Internal error (ref …)" and the details are
 * reported under that reference.
 */
export function toProtocolError(error: unknown, report: InternalErrorReporter = logInternalError): ProtocolError {
  if (error instanceof JsonRpcError) return new ProtocolError(error.code, error.message, error.data);
  if (error instanceof ProtocolError) return error;
  const ref = newErrorRef();
  report(error, ref);
  const internal = internalErrorWithRef(ref);
  return new ProtocolError(internal.code, internal.message);
}
