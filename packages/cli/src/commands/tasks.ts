import { PostgresOperator, assertSchemaName } from '@mcp-tasks/postgres';
import type { Command } from '../command.js';
import { UsageError } from '../command-errors.js';
import { withPool } from '../database/with-pool.js';
import { cancelTask } from '../operator/cancel-task.js';
import { cancelTasks } from '../operator/cancel-tasks.js';
import { cliOperator } from '../operator/operator-identity.js';
import { retryTask } from '../operator/retry-task.js';
import { listTasks } from '../operator/list-tasks.js';
import { showTask } from '../operator/show-task.js';
import { schemaOf, schemaOption, schemaUsage } from './schema-option.js';

const ACTIONS = ['list', 'show', 'cancel', 'retry'] as const;
const FILTERS = ['status', 'tool', 'node', 'owner', 'older-than'] as const;

export const tasksCommand: Command = {
  name: 'tasks',
  summary: 'list, show, cancel and retry the tasks of every owner, from the database (operators)',
  positionals: 'list | show ID | cancel ID | cancel FILTERS | retry ID',
  usage: `Usage: mcp-tasks tasks list [--status S] [--tool T] [--node N] [--owner SUBJECT] [--older-than D] [--limit N] [--json]
       mcp-tasks tasks show ID [--reveal] [--json]
       mcp-tasks tasks cancel ID [--yes]
       mcp-tasks tasks cancel [--status S] [--tool T] [--node N] [--owner SUBJECT] [--older-than D] [--yes]
       mcp-tasks tasks retry ID [--yes]

The tasks of the whole cluster, every owner's, read from PostgreSQL: access to the database is
the credential. list prints the newest first (50 unless --limit); show prints one task's row,
its input requests, answers and result only as keys and sizes unless --reveal, and its history
(every change with its time, node and attempt, the questions asked, each attempt's error, the
operators' actions); cancel marks a live task cancelled with the same compare-and-set and NOTIFY
as tasks/cancel (the node running it aborts the run), and its status message reads "Cancelled
by an operator"; with filters instead of an id it lists the live tasks that match and cancels
those (at most 1000) once confirmed; retry runs a failed or cancelled task again as a new task
with the same arguments and owner, where its tool allows it (defineTool's retry). On a terminal
cancel and retry ask first; --yes skips the question, and a cancel by filter without a terminal
needs it. The history records who acted: cli:<user>@<host>.
${schemaUsage}
  --status <status>      working, input_required, completed, failed or cancelled
  --tool <name>          tasks of this tool
  --node <id>            tasks held by this node (a NODE_ID: every process of that name)
  --owner <subject>      tasks of this owner (the token's subject)
  --older-than <d>       tasks created at least this long ago: 90s, 5m, 2h, 1d
  --limit <n>            at most n tasks (default 50)
  --reveal               show: the answers, results and errors themselves
  --json                 print JSON instead of text
  --yes                  cancel, retry: do it without asking`,
  options: {
    ...schemaOption,
    status: { type: 'string' },
    tool: { type: 'string' },
    node: { type: 'string' },
    owner: { type: 'string' },
    'older-than': { type: 'string' },
    limit: { type: 'string' },
    reveal: { type: 'boolean' },
    json: { type: 'boolean' },
    yes: { type: 'boolean' },
  },
  async run({ values, positionals, database, io }) {
    const [action, taskId, extra] = positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(`mcp-tasks tasks needs list, show ID, cancel ID or retry ID${action === undefined ? '' : ` (got ${JSON.stringify(action)})`}; see mcp-tasks tasks --help`);
    }
    const filtered = FILTERS.some((name) => values[name] !== undefined);
    const bulk = action === 'cancel' && taskId === undefined && filtered;
    if (action === 'cancel' && taskId !== undefined && filtered) throw new UsageError('mcp-tasks tasks cancel takes one task id or filters, not both');
    if (action === 'list' ? taskId !== undefined : !bulk && (taskId === undefined || extra !== undefined)) {
      throw new UsageError(
        action === 'list'
          ? 'mcp-tasks tasks list takes no task id (use the filters)'
          : action === 'cancel'
            ? 'mcp-tasks tasks cancel takes one task id, or filters (--status, --tool, --node, --owner, --older-than)'
            : `mcp-tasks tasks ${action} takes one task id`,
      );
    }
    const schema = assertSchemaName(schemaOf(values));
    return withPool(database, (pool) => {
      const operator = new PostgresOperator(pool, schema);
      if (action === 'list') return listTasks(operator, values, io);
      if (action === 'show') return showTask(operator, taskId!, values['reveal'] === true, values['json'] === true, io);
      const yes = values['yes'] === true;
      if (action === 'retry') return retryTask(operator, taskId!, cliOperator(), yes, io);
      if (bulk) return cancelTasks(operator, values, cliOperator(), io);
      return cancelTask(operator, taskId!, cliOperator(), yes, io);
    });
  },
};
