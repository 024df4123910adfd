import { ErrorCode, JsonRpcError, type JsonObject } from '@mcp-tasks/core';
import { fromJsonSchema } from '@modelcontextprotocol/server';
import { linearSchemaValidator } from './linear-schema-validator.js';
import type { UpstreamTool } from './upstream-client.js';

/** An upstream tool as the proxy serves it: under its exposed name, with the upstream's schemas. */
export class MountedTool {
  readonly #validate: (value: unknown) => readonly { message: string; path?: readonly PropertyKey[] | undefined }[] | undefined;

  constructor(
    /** The name the proxy lists it under. */
    readonly exposed: string,
    readonly upstream: UpstreamTool,
  ) {
    let schema: ReturnType<typeof fromJsonSchema>;
    try {
      schema = fromJsonSchema(upstream.inputSchema as never, linearSchemaValidator());
    } catch {
      // A schema the validator cannot compile refuses every call rather than letting anything through.
      this.#validate = () => [{ message: 'the upstream lists an inputSchema that cannot be compiled' }];
      return;
    }
    this.#validate = (value) => {
      const outcome = schema['~standard'].validate(value);
      if (outcome instanceof Promise) return [{ message: 'the upstream lists an inputSchema that validates asynchronously' }];
      return 'issues' in outcome && outcome.issues ? outcome.issues.map((issue) => ({ message: issue.message, path: issue.path?.map((p) => (typeof p === 'object' && p !== null && 'key' in p ? p.key : p)) as PropertyKey[] | undefined })) : undefined;
    };
  }

  /**
   * What `tools/list` shows: the upstream's listing under the exposed name. `tasks`: this server
   * makes tasks of its calls, so the tool is listed with the task support a client of either
   * revision reads before it asks for a task (`params.task` in 2025-11-25): `optional`, since a
   * call that asks for none goes upstream inline, or `required` when the upstream runs it only
   * as a task.
   */
  listing(tasks: boolean): JsonObject {
    const { title, description, inputSchema, outputSchema, annotations, taskRequired } = this.upstream;
    return {
      name: this.exposed,
      inputSchema,
      ...(title === undefined ? {} : { title }),
      ...(description === undefined ? {} : { description }),
      ...(outputSchema === undefined ? {} : { outputSchema }),
      ...(annotations === undefined ? {} : { annotations }),
      ...(tasks ? { execution: { taskSupport: taskRequired ? 'required' : 'optional' } } : {}),
    };
  }

  /** The arguments, checked against the upstream's inputSchema before anything goes upstream (-32602 otherwise). */
  parseArguments(raw: unknown, maxBytes: number): JsonObject {
    const value = raw ?? {};
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
    if (bytes > maxBytes) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid arguments for tool ${this.exposed}: arguments are ${bytes} bytes; the limit is ${maxBytes}`);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid arguments for tool ${this.exposed}: arguments must be an object`);
    }
    const issues = this.#validate(value);
    if (issues && issues.length > 0) {
      const detail = issues.map((issue) => `${issue.path && issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)'}: ${issue.message}`).join('; ');
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid arguments for tool ${this.exposed}: ${detail}`);
    }
    return value as JsonObject;
  }
}
