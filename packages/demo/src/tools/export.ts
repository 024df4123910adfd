import { defineTool, type ToolContext } from '@mcp-tasks/server';
import * as z from 'zod';
import { sleep } from './sleep.js';

/**
 * `export` (the seed's example): exports `files` files, reporting progress per file, until
 * cancelled. Resumable: each file is a journaled step, so a run that takes over after its node
 * was lost skips the files already exported and says how many times it was resumed (a wait for
 * the confirmation is not a resumption). With `confirm`, it
 * first asks the user to go ahead; the wait holds no run slot (the answer resumes it, on any
 * node with room), and anything but a yes exports nothing.
 */
/** The journal's record of a run that got to export (one per attempt). */
const RUN_STEP_PREFIX = 'run-';

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
    confirm: z.boolean().default(false),
  }),
  async execute({ project, files, delayMs, confirm }, ctx) {
    let exported = 0;
    const goAhead = !confirm || (await confirmed(ctx, project, files));
    // Each run that gets to export journals that it did: a run that only parked for the
    // confirmation (and the claim that brought its answer) is no resumption, a lost one is.
    if (goAhead) await ctx.step(`${RUN_STEP_PREFIX}${ctx.attempt}`, () => ctx.attempt);
    while (goAhead && exported < files && !ctx.cancelled()) {
      const file = exported + 1;
      try {
        await ctx.step(`file-${file}`, async () => {
          await sleep(delayMs, ctx.signal);
          return file;
        });
      } catch (error) {
        // A cancel (or a run the runtime gave up) stops the export; anything else is an error.
        if (ctx.cancelled()) break;
        throw error;
      }
      exported = file;
      await ctx.progress(exported, files);
    }
    let text = `Exported ${exported} of ${files} files.`;
    const journal = goAhead && ctx.attempt > 1 ? await ctx.journal() : [];
    const resumed = journal.filter((step) => step.name.startsWith(RUN_STEP_PREFIX)).length - 1;
    if (resumed > 0) {
      // Redone: file steps whose work started more than once (the run that was lost was in them).
      const redone = journal.filter((step) => step.name.startsWith('file-') && step.starts > 1).length;
      text += ` (resumed ${resumed} ${resumed === 1 ? 'time' : 'times'}, ${redone} files redone)`;
    }
    return { content: [{ type: 'text', text }] };
  },
});

async function confirmed(ctx: ToolContext<unknown>, project: string, files: number): Promise<boolean> {
  const answer = await ctx.elicit('confirm', {
    mode: 'form',
    message: `Export ${files} files of ${project}?`,
    requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', description: 'Export the files' } }, required: ['confirm'] },
  });
  return answer.action === 'accept' && answer.content?.['confirm'] === true;
}
