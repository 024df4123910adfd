import { runTaskMachineCases, runTaskStoreContract } from '@mcp-tasks/core/testing';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase } from '../support/database.js';

// The store's events come from the node beside it (its LISTEN connection); nothing else of the
// node runs here, but for the lifecycle table its orphan rescuer (no grace, rounds only when
// asked): the table's runs claim as this node, and a rescue round that finds none of them held
// loses them all, through the lost-run SQL the reaper and the restart settlement share.
const postgresStore = async () => {
  const database = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: database.url });
  const node = await PostgresTaskNode.start(store, { lease: false, reaper: false, sweeper: false, rescuer: { graceMs: 0, intervalMs: 3_600_000 } });
  return {
    store,
    events: node,
    runner: node.nodeId,
    loseRuns: async () => {
      const detach = node.attachRuns({ holds: () => false });
      try {
        await node.rescuer!.runOnce();
      } finally {
        detach();
      }
    },
    close: async () => {
      await node.stop();
      await store.close();
      await database.drop();
    },
  };
};

runTaskStoreContract('PostgresTaskStore', postgresStore);
runTaskMachineCases('PostgresTaskStore', postgresStore);
