import type { JsonObject, JsonValue } from '../json/json-value.js';

/** The wire shape of a JSON-RPC error object, as a failed task stores it. */
export interface JsonRpcErrorObject extends JsonObject {
  code: number;
  message: string;
}

/**
 * An error that maps to one JSON-RPC error. Every error this library throws on purpose is one,
 * so the MCP layer can answer with `code`, `message` and `data` without guessing. A tool may throw
 * one too: its task then ends `failed` with exactly this error.
 */
export class JsonRpcError extends Error {
  /** The JSON-RPC error code sent to the client. */
  readonly code: number;
  /** Optional structured detail sent as the error's `data`. */
  readonly data: JsonValue | undefined;

  constructor(code: number, message: string, data?: JsonValue, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }

  /** The error as a JSON-RPC error object. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
