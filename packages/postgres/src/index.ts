export { LISTENER_APPLICATION_NAME, PostgresTaskStore, type PostgresTaskStoreOptions } from './postgres-task-store.js';
export { migrate, type MigrateResult } from './migrations/migrate.js';
export { loadMigrations, migrationsDirectory, type Migration } from './migrations/migration-files.js';
export { DEFAULT_SCHEMA, assertSchemaName } from './schema/schema-name.js';
export { controlChannelOf, type ControlMessage } from './listener/control-channel.js';
export { ControlListener, type ControlListenerConfig, type ControlListenerHooks, type ControlListenerState } from './listener/control-listener.js';
export { TtlSweeper, type SweepResult, type TtlSweeperConfig } from './maintenance/ttl-sweeper.js';
export { TestSignal } from './maintenance/test-signal.js';
export { consoleLogger, type MaintenanceLogger } from './maintenance/maintenance-logger.js';
