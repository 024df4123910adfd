export { McpTasks, type McpTasksHandlerOptions, type McpTasksListenOptions, type McpTasksOptions } from './mcp-tasks.js';
export { SdkSeamMissingError } from './sdk/assert-sdk-seams.js';
export { type McpTasksHandler, type DirectServe } from './direct/with-task-requests.js';
export { type DirectRequest, type DirectResponse } from './direct/direct-exchange.js';
export { withTaskListen, type TaskListenHandler, type TaskListenOptions } from './listen/task-listen.js';
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
export { TASKS_EXTENSION, declaresTasksExtension } from './capability/tasks-extension.js';
export { missingTasksCapability } from './capability/missing-tasks-capability.js';
export {
  DEFAULT_HOST_SCOPE,
  defaultOwnerResolver,
  type DefaultOwnerOptions,
  type OwnerRequest,
  type OwnerResolver,
} from './owner/owner-resolver.js';
export { classifySdkError } from './errors/classify-sdk-error.js';
export { toProtocolError } from './errors/to-protocol-error.js';
export { staticTokenVerifier, parseStaticTokens, type StaticToken, type StaticTokenTable } from './auth/static-token-verifier.js';
export { jwtTokenVerifier, type JwtTokenVerifierOptions } from './auth/jwt-token-verifier.js';
export { assertScopes, missingScopes, InsufficientScopeError } from './auth/task-scopes.js';
export { taskScopeChallenge, TASK_METHODS, type TaskScopeChallengeDeps } from './auth/task-scope-challenge.js';
export { checkRequestBody } from './handlers/check-request-body.js';
export { OwnerRateLimiter, DEFAULT_RATE_LIMIT, type RateLimitOptions } from './limits/owner-rate-limiter.js';
export { ListenStreamCaps, DEFAULT_LISTEN_STREAM_CAPS, type ListenStreamCapOptions } from './limits/listen-stream-caps.js';
