export { McpTasks, type McpTasksHandlerOptions, type McpTasksLegacyOptions, type McpTasksListenOptions, type McpTasksOptions } from './mcp-tasks.js';
export { SdkSeamMissingError } from './sdk/assert-sdk-seams.js';
export { type McpTasksHandler, type DirectServe } from './front/front-door.js';
export type { NodeListener, NodeRequest } from './node/node-listener.js';
export { validHost } from './node/host-header.js';
export { readBody } from './node/read-body.js';
export { type DirectRequest, type DirectResponse } from './exchange/direct-exchange.js';
export { withTaskListen, type TaskListenHandler, type TaskListenOptions } from './listen/task-listen.js';
export { withLegacyTasks, type LegacyTasksHandler } from './legacy/legacy-tasks-edge.js';
export type { LegacyTasksDeps } from './legacy/legacy-deps.js';
export type { ListTasksPolicy } from './legacy/legacy-capability.js';
export {
  defineTool,
  type PrepareContext,
  type TaskSupport,
  type TaskTool,
  type AnyTaskTool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from './tool/define-tool.js';
export { InlineInputNeeded } from './tool/inline-input.js';
export { LiveTaskTools } from './tool/live-task-tools.js';
export { TASKS_EXTENSION, declaresTasksExtension } from './capability/tasks-extension.js';
export { missingTasksCapability } from './capability/missing-tasks-capability.js';
export {
  DEFAULT_HOST_SCOPE,
  defaultOwnerResolver,
  type DefaultOwnerOptions,
  type OwnerRequest,
  type OwnerResolver,
} from './access/owner-resolver.js';
export { SubjectlessTokenError, SUBJECTLESS_TOKEN_MESSAGE } from './access/subjectless-token.js';
export { classifySdkError } from './errors/classify-sdk-error.js';
export { toProtocolError } from './errors/to-protocol-error.js';
export { staticTokenVerifier, parseStaticTokens, type StaticToken, type StaticTokenTable } from './auth/static-token-verifier.js';
export { jwtTokenVerifier, type JwtTokenVerifierOptions } from './auth/jwt-token-verifier.js';
export { assertScopes, missingScopes, InsufficientScopeError } from './access/task-scopes.js';
export { taskScopeChallenge, TASK_METHODS, type TaskScopeChallengeDeps } from './access/task-scope-challenge.js';
export { checkRequestBody } from './front/check-request-body.js';
export type { ClientMistakeLogOptions } from './errors/client-mistake-log.js';
export { jsonTextTooDeep, MAX_JSON_DEPTH } from './exchange/json-depth.js';
export { foreignRequest, forbiddenBody, isLoopbackAddress, LOOPBACK_HOSTS, originPolicyOf, type OriginPolicy } from './front/request-origin.js';
export { OwnerRateLimiter, DEFAULT_RATE_LIMIT, type RateLimitOptions } from './limits/owner-rate-limiter.js';
export { OwnerInFlightCap, DEFAULT_IN_FLIGHT, type InFlightOptions } from './limits/owner-in-flight-cap.js';
export { ListenStreamCaps, DEFAULT_LISTEN_STREAM_CAPS, type ListenStreamCapOptions } from './limits/listen-stream-caps.js';
export { RefusalHold, DEFAULT_REFUSAL_HOLD, type RefusalHoldOptions } from './limits/refusal-hold.js';
export { LimitRefusalCounter } from './limits/limit-refusal-counter.js';
export { NodeAdmission, DEFAULT_ADMISSION, type AdmissionOptions } from './limits/node-admission.js';
export { ToolRunLimits, DEFAULT_TOOL_RUNS, type ToolRunOptions } from './limits/tool-run-limits.js';
export { RequestLimits, type LimitedCall } from './limits/request-limits.js';
export { LISTEN_BASE_COST, LISTEN_IDS_PER_TOKEN, requestCost } from './limits/request-cost.js';
export { proxyUpstream, UpstreamMount, type ProxyUpstreamOptions } from './proxy/upstream-mount.js';
export { UpstreamCapacityError, type UpstreamCapacityOptions } from './proxy/upstream-share.js';
export type { UpstreamRateOptions } from './proxy/upstream-pacer.js';
export { StreamableHttp2026Client, type StreamableHttp2026Options } from './proxy/streamable-http-2026.js';
export { StreamableHttp2025Client, type StreamableHttp2025Options } from './proxy/streamable-http-2025.js';
export type { UpstreamCallOptions, UpstreamCallOutcome, UpstreamClient, UpstreamTask, UpstreamTool } from './proxy/upstream-client.js';
export { UpstreamError, UpstreamRpcError } from './proxy/upstream-error.js';
