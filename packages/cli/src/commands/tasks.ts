import { PostgresOperator, assertSchemaName } from '@mcp-tasks/postgres';
import type { Command } from '../command.js';
import { UsageError } from '../command-errors.js';
import { withPool } from '../database/with-pool.js';
import { cancelTask } from '../operator/cancel-task.js';
import { listTasks } from '../operator/list-tasks.js';
import { showTask } from '../operator/show-task.js';
import { schemaOf, schemaOption, schemaUsage } from './schema-option.js';

const ACTIONS = ['list', 'show', 'cancel'] as const;

export const tasksCommand: Command = {
  name: 'tasks',
  summary: 'list, show and cancel the tasks of every owner, from the database (operators)',
  positionals: 'list | show ID | cancel ID',
  usage: `Usage: mcp-tasks tasks list [--status S] [--tool T] [--node N] [--owner SUBJECT] [--older-than D] [--limit N] [--json]
       mcp-tasks tasks show ID [--reveal] [--json]
       mcp-tasks tasks cancel ID

The tasks of the whole cluster, every owner's, read from PostgreSQL: access to the database is
the credential. list prints the newest first (50 unless --limit); show prints one task's row,
its input requests, answers and result only as keys and sizes unless --reveal; cancel marks a
live task cancelled with the same compare-and-set and NOTIFY as tasks/cancel (the node running
it aborts the run), and its status message reads "Cancelled by an operator".
${schemaUsage}
  --status <status>      working, input_required, completed, failed or cancelled
  --tool <name>          tasks of this tool
  --node <id>            tasks held by this node (a NODE_ID: every process of that name)
  --owner <subject>      tasks of this owner (the token's subject)
  --older-than <d>       tasks created at least this long ago: 90s, 5m, 2h, 1d
  --limit <n>            at most n tasks (default 50)
  --reveal               show: the answers, results and errors themselves
  --json                 print JSON instead of text`,
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
  },
  async run({ values, positionals, database, io }) {
    const [action, taskId, extra] = positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(`mcp-tasks tasks needs list, show ID or cancel ID${action === undefined ? '' : ` (got ${JSON.stringify(action)})`}; see mcp-tasks tasks --help`);
    }
    if (action === 'list' ? taskId !== undefined : taskId === undefined || extra !== undefined) {
      throw new UsageError(action === 'list' ? 'mcp-tasks tasks list takes no task id (use the filters)' : `mcp-tasks tasks ${action} takes one task id`);
    }
    const schema = assertSchemaName(schemaOf(values));
    return withPool(database, (pool) => {
      const operator = new PostgresOperator(pool, schema);
      if (action === 'list') return listTasks(operator, values, io);
      if (action === 'show') return showTask(operator, taskId!, values['reveal'] === true, values['json'] === true, io);
      return cancelTask(operator, taskId!, io);
    });
  },
};
