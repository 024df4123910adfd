import { runTaskMachineCases, runTaskStoreContract } from '@mcp-tasks/core/testing';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase } from './support/database.js';

// The store's events come from the node beside it (its LISTEN connection); nothing else of the
// node runs here.
const postgresStore = async () => {
  const database = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: database.url });
  const node = await PostgresTaskNode.start(store, { lease: false, reaper: false, sweeper: false });
  return {
    store,
    events: node,
    close: async () => {
      await node.stop();
      await store.close();
      await database.drop();
    },
  };
};

runTaskStoreContract('PostgresTaskStore', postgresStore);
runTaskMachineCases('PostgresTaskStore', postgresStore);
