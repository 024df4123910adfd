import type { AnyTaskTool } from '@mcp-tasks/server';
import { confirmDelete } from './confirm-delete.js';
import { exportTool } from './export.js';
import { failingJob } from './failing-job.js';
import { multiInput } from './multi-input.js';
import { protocolErrorJob } from './protocol-error-job.js';
import { slowCompute } from './slow-compute.js';
import { stubborn } from './stubborn.js';
import { testToolWithTask } from './test-tool-with-task.js';

export { registerGreet } from './greet.js';

/** The demo's task tools: the conformance fixtures, the seed's `export`, and `stubborn` (a run that ignores its abort). */
export const taskTools: readonly AnyTaskTool[] = [
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  testToolWithTask,
  exportTool,
  stubborn,
];
