import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';

/**
 * `stubborn`: sleeps `seconds` and ignores its abort signal, for tests of what a cancel does to a
 * run that will not stop (its run slot is given back after `MCP_TASKS_ABORT_GRACE_MS`, and what
 * it returns when it wakes is not written).
 */
export const stubborn = defineTool({
  name: 'stubborn',
  description: 'Sleeps for `seconds` seconds, ignoring cancellation, then returns.',
  task: 'optional',
  input: z.object({ seconds: z.number().min(0).max(3600) }),
  async execute({ seconds }) {
    // On purpose: no signal is passed, so a cancel cannot cut the sleep short.
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    return { content: [{ type: 'text', text: `Slept ${seconds}s, ignoring cancellation` }] };
  },
});
