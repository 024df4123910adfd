import { PostgresOperator, assertSchemaName } from '@mcp-tasks/postgres';
import type { Command } from '../command.js';
import { withPool } from '../database/with-pool.js';
import { ExitCode } from '../exit-codes.js';
import { formatAge } from '../operator/duration.js';
import { textTable } from '../operator/text-table.js';
import { schemaOf, schemaOption, schemaUsage } from './schema-option.js';

export const nodesCommand: Command = {
  name: 'nodes',
  summary: 'list the nodes of the cluster: lease age, expired or not, running tasks, LISTEN or polling only (operators)',
  usage: `Usage: mcp-tasks nodes [--json]

Lists every node with a lease row: when it last renewed its lease (by the database clock),
whether the lease expired (its live tasks are then failed by the lease reaper) and how many
live tasks it holds, and whether its LISTEN works (\`polling only\`: cancels and answers reach
its runs by the poll alone, as behind a transaction pooler without DIRECT_DATABASE_URL).
${schemaUsage}
  --json                 print JSON instead of text`,
  options: { ...schemaOption, json: { type: 'boolean' } },
  async run({ values, database, io }) {
    const schema = assertSchemaName(schemaOf(values));
    return withPool(database, async (pool) => {
      const nodes = await new PostgresOperator(pool, schema).listNodes();
      if (values['json'] === true) io.out(JSON.stringify(nodes, null, 2));
      else if (nodes.length === 0) io.out('No nodes have a lease.');
      else {
        io.out(
          textTable(
            ['NODE', 'LEASE RENEWED', 'LEASE', 'RUNNING', 'LISTEN', 'STARTED'],
            nodes.map((n) => [
              n.nodeId,
              `${formatAge(n.leaseAgeMs)} ago`,
              n.expired ? 'expired' : 'live',
              String(n.running),
              n.listening === true ? 'listening' : n.listening === false ? 'polling only' : 'unknown',
              n.startedAt.toISOString(),
            ]),
          ),
        );
      }
      return ExitCode.ok;
    });
  },
};
