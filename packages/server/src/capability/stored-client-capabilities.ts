import type { ClientCapabilities } from '@mcp-tasks/core';

/**
 * The members of a client's capabilities that a task's run reads: what its input requests need
 * (`requiredCapabilitiesOf` in core: elicitation form and url, sampling and its tools, roots).
 */
const MEMBERS_USED: Readonly<Record<string, readonly string[]>> = { elicitation: ['form', 'url'], sampling: ['tools'], roots: [] };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What of `declared` is stored with a task: only the capabilities and members its run checks, each
 * as `{}`, so the row is a few bytes whatever the client declared (a declaration of 232 KiB was
 * otherwise kept, per task, until the task's TTL). A bare `elicitation: {}` stays bare: it means
 * form mode.
 */
export function storedClientCapabilities(declared: ClientCapabilities): ClientCapabilities {
  const kept: ClientCapabilities = {};
  for (const [name, members] of Object.entries(MEMBERS_USED)) {
    const value = declared[name];
    if (!isObject(value)) continue;
    kept[name] = Object.fromEntries(members.filter((member) => Object.hasOwn(value, member) && value[member] !== undefined).map((member) => [member, {}]));
  }
  return kept;
}
