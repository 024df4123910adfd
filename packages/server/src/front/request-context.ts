import type { AuthInfo, RequestId, ServerContext } from '@modelcontextprotocol/server';

/** What a request the SDK does not dispatch carries into its handler, tracer and task start. */
export interface RequestContextFields {
  readonly id: RequestId;
  readonly method: string;
  /** `params._meta` without the envelope keys (the client's trace context among them). */
  readonly meta?: Record<string, unknown> | undefined;
  /** The 2026-07-28 envelope the SDK lifts out of `_meta`. */
  readonly envelope?: Record<string, unknown> | undefined;
  readonly inputResponses?: Record<string, unknown> | undefined;
  readonly droppedInputResponseKeys?: readonly string[] | undefined;
}

/**
 * The SDK's `ServerContext` for a request served beside it (the fast lane, the 2025-11-25 edge):
 * only what the handlers, the tracer and a task's start read of it, shaped as the SDK builds it,
 * so a span or a task row does not tell which lane served the request. Built here only.
 */
export function requestContextOf(fields: RequestContextFields, authInfo: AuthInfo | undefined, request?: Request): ServerContext {
  const http = request === undefined ? (authInfo === undefined ? undefined : { authInfo }) : { req: request, ...(authInfo === undefined ? {} : { authInfo }) };
  return {
    mcpReq: {
      id: fields.id,
      method: fields.method,
      ...(fields.meta === undefined ? {} : { _meta: fields.meta }),
      ...(fields.envelope === undefined ? {} : { envelope: fields.envelope }),
      ...(fields.inputResponses === undefined ? {} : { inputResponses: fields.inputResponses }),
      ...(fields.droppedInputResponseKeys === undefined ? {} : { droppedInputResponseKeys: fields.droppedInputResponseKeys }),
    },
    http,
  } as unknown as ServerContext;
}
