export { runTaskStoreContract, type StoreUnderTest } from './task-store-contract.js';
