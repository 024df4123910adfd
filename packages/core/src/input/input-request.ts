import type { JsonObject } from '../json/json-value.js';

/** The server-to-client methods a task may ask through `inputRequests`. */
export type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/** One outstanding server-to-client request, as `tasks/get` shows it under its key. */
export interface InputRequest extends JsonObject {
  method: InputMethod;
  params: JsonObject;
}

/** The client's answer to one input request: the result of the equivalent standalone request. */
export type InputResponse = JsonObject;

/** Outstanding requests by key. */
export type InputRequests = Record<string, InputRequest>;

/** Answers by key, as `tasks/update` carries them. */
export type InputResponses = Record<string, InputResponse>;
