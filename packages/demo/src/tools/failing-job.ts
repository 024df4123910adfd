import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { sleep } from './sleep.js';

/** `failing_job` (task required): after about a second, a tool execution error (`isError: true`). */
export const failingJob = defineTool({
  name: 'failing_job',
  description: 'Always ends with a tool execution error after about a second (runs only as a task).',
  task: 'required',
  input: z.object({}),
  async execute(_args, ctx) {
    await sleep(1000, ctx.signal);
    return { content: [{ type: 'text', text: 'The job failed: the upstream system rejected the batch' }], isError: true };
  },
});
