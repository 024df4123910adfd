/** JSON-RPC error codes used by the tasks extension. */
export const ErrorCode = {
  /** The request is not valid (also: a required task tool over the owner's quota). */
  InvalidRequest: -32600,
  /** The method does not exist (`tasks/list`, `tasks/result` on 2026-07-28). */
  MethodNotFound: -32601,
  /** Invalid parameters: unknown, expired or foreign task ids; malformed values. */
  InvalidParams: -32602,
  /** An internal error; its message never carries internals. */
  InternalError: -32603,
  /** A server error: a rate limit or capacity limit refused the request; `data` says which and when to retry. */
  ServerError: -32000,
  /** The request needs a client capability it did not declare (the tasks extension). */
  MissingRequiredClientCapability: -32021,
} as const;

/** One of the codes in {@link ErrorCode}. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];
