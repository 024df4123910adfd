export type { JsonObject, JsonValue } from './json/json-value.js';
export { assertJsonObject } from './json/assert-json-object.js';

export { ErrorCode, type ErrorCodeValue } from './errors/error-codes.js';
export { JsonRpcError, type JsonRpcErrorObject } from './errors/json-rpc-error.js';
export { TaskNotFoundError } from './errors/task-not-found-error.js';
export { QuotaExceededError } from './errors/quota-exceeded-error.js';
export { InvalidTaskValueError } from './errors/invalid-task-value-error.js';
export { TaskCancelledError } from './errors/task-cancelled-error.js';

export {
  TASK_STATUSES,
  LIVE_STATUSES,
  isTaskStatus,
  isTerminal,
  type TaskStatus,
  type LiveTaskStatus,
  type TerminalTaskStatus,
} from './task/task-status.js';
export { assertTaskOwner, ownerKey, type TaskOwner } from './task/task-owner.js';
export { newTaskId, isWellFormedTaskId, TASK_ID_BYTES } from './task/task-id.js';
export { outstandingInputs, type NewTask, type TaskInput, type TaskRecord } from './task/task-record.js';
export { toDetailedTask, toTaskView, type DetailedTask, type TaskView } from './task/detailed-task.js';

export type { InputMethod, InputRequest, InputRequests, InputResponse, InputResponses } from './input/input-request.js';

export type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  TaskControlState,
  TaskOutcome,
  TaskRef,
  TaskSignal,
  TaskStore,
  Unsubscribe,
  RunRegistry,
} from './store/task-store.js';
export { TASK_LIMITS } from './store/task-limits.js';
export {
  normaliseStatusMessage,
  validateInputKey,
  validateInputRequest,
  validateInputResponse,
  validateInputResponses,
  validateNewTask,
  validateOutcome,
  validateRef,
} from './store/validate-store-input.js';
export { MemoryTaskStore, type MemoryTaskStoreOptions } from './store/memory-task-store.js';

export { TaskRuntime, type TaskExecute, type TaskRunRequest, type TaskRuntimeOptions } from './runtime/task-runtime.js';
export { RuntimeDrainingError } from './runtime/runtime-draining-error.js';
export type { RpcErrorClassifier } from './runtime/rpc-error-of.js';
export type {
  ElicitParams,
  ElicitResult,
  RootsResult,
  SampleParams,
  SampleResult,
  TaskContext,
} from './runtime/task-context.js';

export {
  TASK_RUN_CHANNEL,
  TASK_STATUS_CHANNEL,
  taskRunChannel,
  taskStatusChannel,
  type TaskRunMessage,
  type TaskStatusMessage,
} from './telemetry/task-channels.js';
export type { TelemetryOptions } from './telemetry/task-telemetry.js';
