import { ProtocolError, ProtocolErrorCode, type JSONRPCRequest, type McpServer, type RegisteredTool, type Result, type ScopeChallengeHandler, type ServerContext } from '@modelcontextprotocol/server';

// Every place @mcp-tasks/server leans on an McpServer internal that its types do not show (or mark
// @internal). Nothing outside src/sdk/ may name them (test/server/sdk-seams.test.ts greps for it);
// assertSdkSeams checks once per process that the installed SDK still has each of them.

/** A request handler as the SDK's Protocol keeps them. */
export type SdkRequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

interface ProtocolInternals {
  _serverInfo?: { name?: unknown };
  _getRequestHandler?(method: string): SdkRequestHandler | undefined;
  fallbackRequestHandler?: SdkRequestHandler;
}

/** The seams {@link assertSdkSeams} checks, by the name an error reports. */
export const SDK_SEAMS = ['Server._serverInfo', 'Server._getRequestHandler', 'Server.fallbackRequestHandler', 'McpServer.resolveScopeChallenge', 'RegisteredTool.execution', 'McpServer._registeredTools'] as const;

/** Which of {@link SDK_SEAMS} this McpServer (with one tool registered as `tool`) lacks. */
export function missingSeams(server: McpServer, tool: RegisteredTool): string[] {
  const protocol = server.server as unknown as ProtocolInternals;
  const present: Record<(typeof SDK_SEAMS)[number], boolean> = {
    'Server._serverInfo': typeof protocol._serverInfo === 'object' && protocol._serverInfo !== null && 'name' in protocol._serverInfo,
    'Server._getRequestHandler': typeof protocol._getRequestHandler === 'function' && typeof protocol._getRequestHandler.call(protocol, 'tools/call') === 'function',
    'Server.fallbackRequestHandler': 'fallbackRequestHandler' in protocol,
    'McpServer.resolveScopeChallenge': typeof (server as { resolveScopeChallenge?: unknown }).resolveScopeChallenge === 'function',
    'RegisteredTool.execution': 'execution' in tool,
    'McpServer._registeredTools': typeof (server as unknown as ToolRegistry)._registeredTools === 'object',
  };
  return SDK_SEAMS.filter((seam) => !present[seam]);
}

interface ToolRegistry {
  _registeredTools?: Record<string, unknown>;
}

/** The names of the tools registered on the McpServer so far (its own, which win over proxied ones of the same name). */
export function registeredToolNames(server: McpServer): ReadonlySet<string> {
  return new Set(Object.keys((server as unknown as ToolRegistry)._registeredTools ?? {}));
}

/** The name the McpServer was built with (`new McpServer({ name })`). */
export function serverNameOf(server: McpServer): string | undefined {
  const name = (server.server as unknown as ProtocolInternals)._serverInfo?.name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * Serves `tools/call` with `handle`, outside the SDK's result validation (a CreateTaskResult is
 * not a CallToolResult): the McpServer's own handler is taken out and handed to `build`, which
 * returns the handler that serves `tools/call` from the fallback handler (answered unwrapped).
 */
export function takeOverToolsCall(server: McpServer, build: (own: SdkRequestHandler) => SdkRequestHandler): void {
  takeOverRequest(server, 'tools/call', build);
}

/**
 * Serves `tools/list` with the handler `build` returns from the McpServer's own one, outside the
 * SDK's result validation (the proxied tools carry the upstream's JSON Schemas as they came).
 */
export function takeOverToolsList(server: McpServer, build: (own: SdkRequestHandler) => SdkRequestHandler): void {
  takeOverRequest(server, 'tools/list', build);
}

function takeOverRequest(server: McpServer, method: string, build: (own: SdkRequestHandler) => SdkRequestHandler): void {
  const protocol = server.server as unknown as ProtocolInternals;
  const own = protocol._getRequestHandler?.(method);
  if (!own) throw new Error(`@mcp-tasks/server: the McpServer has no ${method} handler (register a tool first)`);
  server.server.removeRequestHandler(method);
  const handle = build(own);
  const previous = protocol.fallbackRequestHandler;
  protocol.fallbackRequestHandler = async (request, ctx) => {
    if (request.method === method) return handle(request, ctx);
    if (previous) return previous(request, ctx);
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
  };
}

/**
 * Answers the SDK's pre-dispatch scope challenge for `methods` with `challenge` (the SDK asks
 * `McpServer.resolveScopeChallenge`, marked internal, before each request; it covers only its
 * own primitives), and leaves every other method to the SDK.
 */
export function challengeMethods(server: McpServer, methods: ReadonlySet<string>, challenge: ScopeChallengeHandler): void {
  const sdkChallenge = server.resolveScopeChallenge;
  server.resolveScopeChallenge = (context) => (methods.has(context.request.method) ? challenge(context) : sdkChallenge(context));
}

/** Lists a registered tool with `execution.taskSupport` (registerTool has no `execution` option; tools/list reads the field). */
export function setTaskSupport(tool: RegisteredTool, taskSupport: 'optional' | 'required' | 'forbidden'): void {
  tool.execution = { taskSupport };
}
