import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { sleep } from './sleep.js';

/** `export` (the seed's example): exports `files` files, reporting progress per file, until cancelled. */
export const exportTool = defineTool({
  name: 'export',
  description: 'Exports a project file by file, reporting progress; stops when cancelled.',
  task: 'optional',
  scopes: ['export'],
  input: z.object({
    project: z.string().min(1).max(256),
    files: z.number().int().min(0).max(10_000).default(10),
    delayMs: z.number().int().min(0).max(60_000).default(100),
  }),
  async execute({ files, delayMs }, ctx) {
    let exported = 0;
    while (exported < files && !ctx.cancelled()) {
      try {
        await sleep(delayMs, ctx.signal);
      } catch {
        break;
      }
      exported += 1;
      await ctx.progress(exported, files);
    }
    return { content: [{ type: 'text', text: `Exported ${exported} of ${files} files.` }] };
  },
});
