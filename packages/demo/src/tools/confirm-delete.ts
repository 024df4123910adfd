import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { sleep } from './sleep.js';

/**
 * `confirm_delete`: asks for confirmation through one elicitation, then answers. `delayMs` (default
 * 0) holds it in `working` that long before asking and again after the answer (the notifications
 * tests watch each status).
 */
export const confirmDelete = defineTool({
  name: 'confirm_delete',
  description: 'Asks the user to confirm, then "deletes" the file.',
  task: 'optional',
  input: z.object({ filename: z.string().min(1).max(1024), delayMs: z.number().int().min(0).max(60_000).default(0) }),
  async execute({ filename, delayMs }, ctx) {
    if (delayMs > 0) await sleep(delayMs, ctx.signal);
    const answer = await ctx.elicit('confirm', {
      mode: 'form',
      message: `Delete ${filename}?`,
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', description: 'Delete the file' } }, required: ['confirm'] },
    });
    const confirmed = answer.action === 'accept' && answer.content?.['confirm'] === true;
    if (delayMs > 0) await sleep(delayMs, ctx.signal);
    return { content: [{ type: 'text', text: confirmed ? `Deleted ${filename}.` : `Kept ${filename}.` }] };
  },
});
