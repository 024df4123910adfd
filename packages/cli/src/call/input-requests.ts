import { askElicitation } from './elicitation-form.js';
import type { LineReader } from './line-reader.js';
import type { JsonObject } from './mcp-http-client.js';
import { printable } from '../printable.js';

/** The server asked for something this client does not offer (sampling: there is no model here). */
export class UnsupportedInputError extends Error {
  override readonly name = 'UnsupportedInputError';
}

/**
 * Answers the input requests not answered yet (keys are unique over a task's life, so a key
 * seen again on a later poll is the same request and is not asked twice). Elicitations are
 * asked in the terminal; roots are declined with an empty list; sampling cannot be answered.
 */
export async function answerInputRequests(
  requests: JsonObject,
  answered: Set<string>,
  reader: LineReader,
  say: (line: string) => void,
): Promise<JsonObject> {
  const responses: JsonObject = {};
  for (const [key, request] of Object.entries(requests)) {
    if (answered.has(key)) continue;
    const method = String((request as JsonObject)['method']);
    const params = ((request as JsonObject)['params'] ?? {}) as JsonObject;
    if (method === 'elicitation/create') {
      if (params['mode'] !== undefined && params['mode'] !== 'form') {
        say(`The server asks for a ${printable(String(params['mode']))} elicitation, which this client does not offer: declined.`);
        responses[key] = { action: 'decline' };
      } else {
        responses[key] = await askElicitation(params, reader, say);
      }
    } else if (method === 'roots/list') {
      say('The server asks for the roots of this client; it shares none: declined with an empty list.');
      responses[key] = { roots: [] };
    } else {
      throw new UnsupportedInputError(`the server asks for ${printable(method)}, which mcp-tasks call does not offer (it has no model to sample): declined`);
    }
  }
  for (const key of Object.keys(responses)) answered.add(key);
  return responses;
}
