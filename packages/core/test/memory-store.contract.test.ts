import { MemoryTaskStore } from '@mcp-tasks/core';
import { runTaskMachineCases, runTaskStoreContract } from '@mcp-tasks/core/testing';

const memoryStore = async () => {
  const store = new MemoryTaskStore();
  return { store, close: () => store.close() };
};

runTaskStoreContract('MemoryTaskStore', memoryStore);
runTaskMachineCases('MemoryTaskStore', memoryStore);
