import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';

/** `multi_input`: asks two questions at once, so two input keys are outstanding together. */
export const multiInput = defineTool({
  name: 'multi_input',
  description: 'Asks for a name and a confirmation in parallel.',
  task: 'optional',
  input: z.object({}),
  async execute(_args, ctx) {
    const [name, confirm] = await Promise.all([
      ctx.elicit('name', {
        mode: 'form',
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      }),
      ctx.elicit('confirm', {
        mode: 'form',
        message: 'Proceed?',
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
      }),
    ]);
    const who = typeof name.content?.['name'] === 'string' ? name.content['name'] : 'someone';
    const go = confirm.action === 'accept';
    return { content: [{ type: 'text', text: `${who} ${go ? 'confirmed' : 'declined'}.` }] };
  },
});
