export type { JsonObject, JsonValue } from './json/json-value.js';
export { logSafe } from './log/log-safe.js';
export { LOG_LEVELS, isLogLevel, type LogLevel, type LogFields, type Logger } from './log/logger.js';
export { jsonLinesLogger, type JsonLinesLoggerOptions } from './log/json-lines-logger.js';
export { ownerHash } from './log/owner-hash.js';
export { activeTraceFields } from './log/trace-fields.js';
export { defaultLogger, setDefaultLogger } from './log/default-logger.js';
export { assertJsonObject } from './json/assert-json-object.js';

export { ErrorCode, type ErrorCodeValue } from './errors/error-codes.js';
export { JsonRpcError, type JsonRpcErrorObject } from './errors/json-rpc-error.js';
export { TaskNotFoundError } from './errors/task-not-found-error.js';
export { InvalidCursorError } from './errors/invalid-cursor-error.js';
export { QuotaExceededError } from './errors/quota-exceeded-error.js';
export { StoredBytesExceededError } from './errors/stored-bytes-exceeded-error.js';
export { outcomeChargeOf, RESULT_ALLOWANCE_BYTES, storedBytesOf, TASK_ROW_BYTES, type StoredBytesBound } from './store/stored-bytes.js';
export { InvalidTaskValueError } from './errors/invalid-task-value-error.js';
export { MalformedInputResponseError } from './errors/malformed-input-response-error.js';
export { TaskCancelledError } from './errors/task-cancelled-error.js';
export { InvalidInputRequestError } from './errors/invalid-input-request-error.js';
export { InputNotSupportedError } from './errors/input-not-supported-error.js';
export { RateLimitedError } from './errors/rate-limited-error.js';
export { LimitReachedError } from './errors/limit-reached-error.js';
export { InFlightLimitError } from './errors/in-flight-limit-error.js';
export { NodeSaturatedError } from './errors/node-saturated-error.js';

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
export { newTaskId, expiryOfTaskId, isWellFormedTaskId, TASK_ID_BYTES, type TaskIdExpiry } from './task/task-id.js';
export { DEFAULT_MAX_ATTEMPTS, outstandingInputs, type NewTask, type TaskInput, type TaskRecord, type TaskSnapshot } from './task/task-record.js';
export { toDetailedTask, toTaskView, type DetailedTask, type TaskView } from './task/detailed-task.js';

export type { InputMethod, InputRequest, InputRequests, InputResponse, InputResponses } from './input/input-request.js';
export type {
  ElicitBooleanSchema,
  ElicitFieldSchema,
  ElicitFormParams,
  ElicitMultiSelectSchema,
  ElicitNumberSchema,
  ElicitRequestedSchema,
  ElicitSingleSelectSchema,
  ElicitStringSchema,
  ElicitUrlParams,
  SamplingContent,
  SamplingMessage,
} from './input/input-params.js';
export { checkInputRequest } from './input/check-input-request.js';
export { assertClientSupports, missingCapabilities, requiredCapabilitiesOf, type ClientCapabilities } from './input/client-capabilities.js';
export { admitInputRequest } from './input/admit-input-request.js';

export type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  LiveTaskCount,
  StepBegin,
  TaskControlState,
  TaskStep,
  StepsOptions,
  TaskOutcome,
  TaskRef,
  TaskSignal,
  TaskStore,
  Unsubscribe,
} from './store/task-store.js';
export type { FollowedTask, RunRegistry, TaskEvents, TaskNode } from './store/task-events.js';
export { TaskFanOut } from './store/task-fan-out.js';
export type { OwedUpstreamCancel, UpstreamCancelLedger, UpstreamCancelSettlement } from './store/upstream-cancel-ledger.js';
export { decodeTaskCursor, encodeTaskCursor, isAfter, pageLimitOf, toTaskPage, TASK_PAGE_LIMITS, type ListTasksOptions, type TaskPage, type TaskPagePosition } from './store/task-page.js';

export { claimHolds, inputOf, outstandingKeys, stateOf, type RunClaim, type TaskState } from './machine/task-state.js';
export { decideAsk, type AskDecision } from './machine/decide-ask.js';
export { decideAnswer, type AnswerDecision } from './machine/decide-answer.js';
export { decideRead } from './machine/decide-read.js';
export { decideCancel, decideRunWrite } from './machine/decide-end.js';
export { decidePark, isClaimable } from './machine/decide-park.js';
export { decideLostRun, type LostRunState } from './machine/decide-lost-run.js';
export { decideQuota } from './machine/decide-quota.js';
export { TASK_LIMITS } from './store/task-limits.js';
export {
  normaliseStatusMessage,
  validateClaim,
  validateInputKey,
  validateInputRequest,
  validateJsonValue,
  validateStepName,
  validateInputResponse,
  validateInputResponses,
  validateNewTask,
  validateOutcome,
  validateRef,
} from './store/validate-store-input.js';
export { MemoryTaskStore, type MemoryTaskStoreOptions } from './store/memory-task-store.js';

export { QUEUED_STATUS_MESSAGE, TaskRuntime, type TaskErrorContext, type TaskExecute, type TaskExecutor, type TaskRunRequest, type TaskRuntimeOptions } from './runtime/task-runtime.js';
export { MAX_BACKSTOP_STRETCH } from './runtime/control-poller.js';
export { extendTaskContext } from './runtime/run-context.js';
export { toolErrorResult } from './runtime/tool-error-result.js';
export { CARRIED_CAPABILITY, fromStoredCapabilities, toStoredCapabilities, type StoredRunInput } from './runtime/stored-capabilities.js';
export { RuntimeDrainingError } from './runtime/runtime-draining-error.js';
export { classifyOwnRpcError, type RpcErrorClassifier } from './runtime/rpc-error-of.js';
export { internalErrorWithRef, newErrorRef } from './runtime/runtime-fault.js';
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
export { creatorSpanContext, linkToCreator } from './telemetry/task-trace-context.js';
