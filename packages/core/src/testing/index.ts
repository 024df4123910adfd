export { runTaskStoreContract, type StoreUnderTest } from './task-store-contract.js';
export { runTaskMachineCases } from './task-machine-contract.js';
export { TASK_MACHINE_CASES, type MachineAct, type MachineCase, type MachineExpect, type MachineGiven } from './task-machine-cases.js';
