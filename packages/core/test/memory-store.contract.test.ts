import { MemoryTaskStore } from '@mcp-tasks/core';
import { runTaskStoreContract } from '@mcp-tasks/core/testing';

runTaskStoreContract('MemoryTaskStore', async () => {
  const store = new MemoryTaskStore();
  return { store, close: () => store.close() };
});
