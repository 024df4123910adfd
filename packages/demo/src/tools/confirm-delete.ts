import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';

/** `confirm_delete`: asks for confirmation through one elicitation, then answers. */
export const confirmDelete = defineTool({
  name: 'confirm_delete',
  description: 'Asks the user to confirm, then "deletes" the file.',
  task: 'optional',
  input: z.object({ filename: z.string().min(1).max(1024) }),
  async execute({ filename }, ctx) {
    const answer = await ctx.elicit('confirm', {
      mode: 'form',
      message: `Delete ${filename}?`,
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', description: 'Delete the file' } }, required: ['confirm'] },
    });
    const confirmed = answer.action === 'accept' && answer.content?.['confirm'] === true;
    return { content: [{ type: 'text', text: confirmed ? `Deleted ${filename}.` : `Kept ${filename}.` }] };
  },
});
