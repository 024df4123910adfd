import { defineTool } from '@mcp-tasks/server';
import { acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import * as z from 'zod';

const nameSchema = z.object({ name: z.string().min(1).max(256) });

/**
 * `test_tool_with_task` (task required): asks for `user_name` on the original request (MRTR), and
 * once answered becomes a task whose result greets that name.
 */
export const testToolWithTask = defineTool({
  name: 'test_tool_with_task',
  description: 'Asks for your name on the request, then greets you from a task.',
  task: 'required',
  input: z.object({}),
  prepare(_args, ctx) {
    const answer = acceptedContent(ctx.inputResponses, 'user_name', nameSchema);
    if (answer) return answer.name;
    return inputRequired({
      inputRequests: {
        user_name: inputRequired.elicit({
          mode: 'form',
          message: 'What is your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        }),
      },
    });
  },
  async execute(_args, ctx) {
    return { content: [{ type: 'text', text: `Hello, ${ctx.prepared}!` }] };
  },
});
