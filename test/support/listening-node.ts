import { PostgresTaskNode, type PostgresTaskNodeOptions, type PostgresTaskStore } from '@mcp-tasks/postgres';

/**
 * A node beside `store` with only its LISTEN connection (no lease, reaper or sweeper) and test
 * signals on: what a test of delivery between nodes needs.
 */
export function listeningNode(store: PostgresTaskStore, options: Omit<PostgresTaskNodeOptions, 'testSignals'> = {}): Promise<PostgresTaskNode> {
  return PostgresTaskNode.start(store, { lease: false, reaper: false, sweeper: false, testSignals: true, ...options });
}
