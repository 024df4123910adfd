import { runTaskStoreContract } from '@mcp-tasks/core/testing';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase } from './support/database.js';

runTaskStoreContract('PostgresTaskStore', async () => {
  const database = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: database.url });
  return {
    store,
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
});
