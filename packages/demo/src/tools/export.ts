import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { sleep } from './sleep.js';

/**
 * `export` (the seed's example): exports `files` files, reporting progress per file, until
 * cancelled. Resumable: each file is a journaled step, so a run that takes over after its node
 * was lost skips the files already exported and says how many runs it took.
 */
export const exportTool = defineTool({
  name: 'export',
  description: 'Exports a project file by file, reporting progress; stops when cancelled; resumes on another server if its server is lost.',
  task: 'optional',
  resumable: true,
  scopes: ['export'],
  input: z.object({
    project: z.string().min(1).max(256),
    files: z.number().int().min(0).max(10_000).default(10),
    delayMs: z.number().int().min(0).max(60_000).default(100),
  }),
  async execute({ files, delayMs }, ctx) {
    let exported = 0;
    while (exported < files && !ctx.cancelled()) {
      const file = exported + 1;
      try {
        await ctx.step(`file-${file}`, async () => {
          await sleep(delayMs, ctx.signal);
          return file;
        });
      } catch {
        break;
      }
      exported = file;
      await ctx.progress(exported, files);
    }
    let text = `Exported ${exported} of ${files} files.`;
    const resumed = ctx.attempt - 1;
    if (resumed > 0) {
      // Redone: file steps whose work started more than once (the run that was lost was in them).
      const redone = (await ctx.journal()).filter((step) => step.name.startsWith('file-') && step.starts > 1).length;
      text += ` (resumed ${resumed} times, ${redone} files redone)`;
    }
    return { content: [{ type: 'text', text }] };
  },
});
