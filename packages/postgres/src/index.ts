export { DEFAULT_CONNECTION_TIMEOUT_MS, MIGRATION_APPLICATION_NAME, PostgresTaskStore, type PostgresTaskStoreOptions } from './postgres-task-store.js';
export { type PreparedStatementsMode } from './sql/prepared-statements.js';
export { PostgresTaskNode, type PostgresTaskNodeOptions } from './node/postgres-task-node.js';
export { PostgresConnectionError } from './connection/connection-error.js';
export { type SessionConnections } from './node/session-connections.js';
export { LISTENER_APPLICATION_NAME } from './listener/listener-connection.js';
export { LEASE_APPLICATION_NAME } from './maintenance/lease-connection.js';
export { instanceApplicationName, MAX_NODE_NAME_LENGTH, type NodeIdentity } from './node/node-identity.js';
export { migrate, type MigrateResult } from './migrations/migrate.js';
export { loadMigrations, type Migration } from './migrations/migration-files.js';
export { migrationStatus, type AppliedMigration, type MigrationStatus } from './migrations/migration-status.js';
export { migrationScript } from './migrations/migration-script.js';
export { DEFAULT_SCHEMA, assertSchemaName } from './schema/schema-name.js';
export { controlChannelOf, type ControlMessage } from './listener/control-channel.js';
export { ControlListener, type ControlListenerConfig, type ControlListenerHooks, type ControlListenerState } from './listener/control-listener.js';
export { TtlSweeper, type PartitionDrop, type SweepBatch, type SweepResult, type TtlSweeperConfig } from './maintenance/ttl-sweeper.js';
export { TaskPartitioner, type PartitionRound, type TaskPartitionerConfig } from './maintenance/task-partitioner.js';
export { TestSignal } from './maintenance/test-signal.js';
export { consoleLogger, maintenanceLoggerOf, type MaintenanceLogger } from './maintenance/maintenance-logger.js';
export { NodeLease, type NodeLeaseConfig, type NodeLeaseState } from './maintenance/node-lease.js';
export { LeaseReaper, type LeaseReaperConfig, type ReapResult } from './maintenance/lease-reaper.js';
export { OrphanRescuer, type OrphanRescuerConfig, type RescueResult } from './maintenance/orphan-rescuer.js';
export { ORPHAN_ERROR_CODE, orphanErrorText } from './sql/fail-orphaned-tasks.js';
export { LEASE_ERROR_CODE, leaseErrorText, type LeaseFailureReason } from './sql/lease-error.js';
export { PostgresOperator } from './operator/postgres-operator.js';
export type { OperatorAction, OperatorBulkCancel, OperatorRetryResult, TaskEvent, TaskEventKind, TaskHistory } from './history/history-types.js';
export { MAX_BULK_CANCEL } from './history/cancel-tasks-by-operator.js';
export {
  OPERATOR_CANCEL_MESSAGE,
  type OperatorCancelResult,
  type OperatorNodeSummary,
  type OperatorTaskDetail,
  type OperatorTaskFilter,
  type OperatorTaskStep,
  type OperatorTaskSteps,
  type OperatorTaskSummary,
} from './operator/operator-types.js';
export { ClusterStatsService, type ClusterStatsConfig, type ClusterStatsRound } from './maintenance/cluster-stats-service.js';
export { countsByStatus, type ClusterStats, type ClusterTaskCount } from './stats/cluster-stats.js';
export { poolStats, type PoolStats } from './stats/pool-stats.js';
export { redactedValue, type RedactedValue } from './operator/redacted-value.js';
export { PostgresUpstreamCancelLedger } from './upstream-cancels/postgres-upstream-cancel-ledger.js';
export { operatorErrorOf, withoutStack, type OperatorErrorView } from './operator/operator-error.js';
export { inputQuestionOf, type InputQuestion, type QuestionField } from './operator/input-question.js';
