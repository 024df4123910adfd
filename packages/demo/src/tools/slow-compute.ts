import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { sleep } from './sleep.js';

/** `slow_compute`: sleeps `seconds`, then answers; a cancel ends it `cancelled`. */
export const slowCompute = defineTool({
  name: 'slow_compute',
  description: 'Sleeps for `seconds` seconds, then returns a result.',
  task: 'optional',
  input: z.object({ seconds: z.number().min(0).max(3600), label: z.string().max(256).optional() }),
  async execute({ seconds, label }, ctx) {
    await sleep(seconds * 1000, ctx.signal);
    return { content: [{ type: 'text', text: `Computed ${label ?? 'result'} after ${seconds}s` }] };
  },
});
