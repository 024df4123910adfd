import { InputNotSupportedError } from '../errors/input-not-supported-error.js';
import type { JsonObject } from '../json/json-value.js';
import type { InputRequest } from './input-request.js';

/**
 * The client capabilities a request declared (`_meta["io.modelcontextprotocol/clientCapabilities"]`
 * on 2026-07-28), in the protocol's `ClientCapabilities` shape.
 */
export type ClientCapabilities = JsonObject;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What the client must have declared for `request`, as the SDK's inline check computes it. */
export function requiredCapabilitiesOf(request: InputRequest): ClientCapabilities {
  switch (request.method) {
    case 'elicitation/create':
      return request.params['mode'] === 'url' ? { elicitation: { url: {} } } : { elicitation: { form: {} } };
    case 'sampling/createMessage':
      return request.params['tools'] !== undefined || request.params['toolChoice'] !== undefined ? { sampling: { tools: {} } } : { sampling: {} };
    case 'roots/list':
      return { roots: {} };
  }
}

/**
 * The part of `required` that `declared` lacks, or `undefined` when everything is declared. A
 * nested member (`elicitation.url`) must be declared under its capability, except that a bare
 * `elicitation: {}` means form mode (its meaning before modes existed), as in the SDK.
 */
export function missingCapabilities(required: ClientCapabilities, declared: ClientCapabilities): ClientCapabilities | undefined {
  const missing: ClientCapabilities = {};
  for (const [name, requirement] of Object.entries(required)) {
    const value = declared[name];
    if (!isObject(value)) {
      missing[name] = requirement;
      continue;
    }
    if (!isObject(requirement)) continue;
    const bare = value['form'] === undefined && value['url'] === undefined;
    const members = Object.keys(requirement).filter((member) => value[member] === undefined && !(name === 'elicitation' && member === 'form' && bare));
    if (members.length > 0) missing[name] = Object.fromEntries(members.map((member) => [member, {}]));
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}

/**
 * Throws {@link InputNotSupportedError} (-32021) when `declared` does not cover `request`.
 * `declared` is `undefined` when the creating request's capabilities are not known (a caller
 * of the runtime that passes none, or a 2025-11-25 client, which declares them only in
 * `initialize`): then nothing is checked.
 */
export function assertClientSupports(key: string, request: InputRequest, declared: ClientCapabilities | undefined): void {
  if (declared === undefined) return;
  const missing = missingCapabilities(requiredCapabilitiesOf(request), declared);
  if (missing) throw new InputNotSupportedError(key, request.method, missing);
}
