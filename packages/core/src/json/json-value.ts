/** A JSON value as it survives `JSON.stringify` / `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object: the shape of every result, error and input payload a task stores. */
export interface JsonObject {
  [key: string]: JsonValue;
}
