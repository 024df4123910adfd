import type { AuthInfo, McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import { namesNoSubject, subjectlessTokenResponse } from '../access/subjectless-token.js';
import { directRequestOf, fromWebResponse, toWebResponse, type DirectRequest, type DirectResponse } from '../exchange/direct-exchange.js';
import { parsedBodyOf } from '../exchange/parsed-body.js';
import type { TaskListenHandler } from '../listen/task-listen.js';
import { nodeListener, type NodeListener } from '../node/node-listener.js';
import { refuseRequestBody } from './check-request-body.js';
import { TOO_DEEP } from '../exchange/json-depth.js';
import { forbiddenBody, foreignRequest, type OriginPolicy } from './request-origin.js';
import { withFetch } from './with-fetch.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** Serves one request on the fast lane, or `undefined` when it is the SDK lane's. */
export type DirectServe = (request: DirectRequest) => Promise<DirectResponse | undefined>;

/**
 * The whole MCP endpoint of `McpTasks.handler`: `fetch` for any fetch host, `node` for `node:http`,
 * `serveDirect` for a host that holds the request already parsed.
 */
export interface McpTasksHandler extends TaskListenHandler {
  /**
   * Serves `request` when it is a 2026-07-28 `tasks/get|update|cancel`, or a `tools/call` that
   * becomes a task, that the fast lane answers; `undefined` otherwise, and the host then calls
   * `fetch` as for any request. A node:http host that already parsed the body (and verified the
   * token) skips the WHATWG round trip this way; {@link node} does it all.
   */
  serveDirect: DirectServe;
  /**
   * A `node:http` request listener with the fast lane: `createServer(handler.node)`. It reads the
   * body (at most `maxBodyBytes`), takes `req.auth` as the verified token (as the SDK's
   * `toNodeHandler` does, so auth middleware in front of it works unchanged), answers the fast
   * lane's requests straight to the socket and the rest through the SDK lane.
   */
  node: NodeListener;
}

/** Options of {@link frontDoor}. */
export interface FrontDoorOptions {
  /** The SDK lane: the listen edge in front of the 2025-11-25 edge in front of the SDK's handler. */
  readonly sdk: TaskListenHandler;
  /** The fast lane's method servers, tried in order; absent: every request takes the SDK lane. */
  readonly fast: DirectServe | undefined;
  readonly originPolicy: OriginPolicy;
  /** Refuse verified tokens without a subject (the default owner has no owner for them). */
  readonly subjectRequired: boolean;
  /** Largest body `node` reads. */
  readonly maxBodyBytes: number;
  /** Where `node` reports a request that failed inside (answered 500). */
  readonly onerror: (error: Error) => void;
}

/**
 * The one pipeline every request goes through, whichever host hands it over: the Host and Origin
 * check, the subject check, the body read once (bounded) and checked once
 * ({@link refuseRequestBody}), then the fast lane, and only what it declines goes to the SDK lane,
 * with the parsed body (never read or classified again). Each step is here once; `fetch`, `node`
 * and `serveDirect` are three entries into it.
 */
export function frontDoor(options: FrontDoorOptions): McpTasksHandler {
  const { sdk, fast, originPolicy, subjectRequired } = options;

  const foreign = (host: string | undefined, origin: string | undefined): DirectResponse | undefined => {
    const refusal = foreignRequest(host, origin, originPolicy);
    return refusal ? { status: 403, headers: { 'content-type': 'application/json' }, body: forbiddenBody(refusal) } : undefined;
  };
  const subjectless = (authInfo: AuthInfo | undefined): Response | undefined =>
    subjectRequired && authInfo && namesNoSubject(authInfo) ? subjectlessTokenResponse(authInfo) : undefined;

  /** After the Host, Origin and subject checks, with the body parsed: the body check, the fast lane, then the SDK lane. */
  async function serveParsed(request: DirectRequest, body: unknown, requestOptions: McpHandlerRequestOptions | undefined): Promise<DirectResponse | Response> {
    const refusal = refuseRequestBody(body);
    if (refusal) return { status: refusal.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(refusal.response) };
    const served = fast ? await fast(request) : undefined;
    return served ?? sdk.fetch(request.toRequest(), { ...requestOptions, parsedBody: body });
  }

  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    const refused = foreign(request.headers.get('host') ?? new URL(request.url).host, request.headers.get('origin') ?? undefined);
    if (refused) return toWebResponse(refused);
    const authInfo = requestOptions?.authInfo;
    const unowned = subjectless(authInfo);
    if (unowned) return unowned;
    if (request.method.toUpperCase() !== 'POST') return sdk.fetch(request, requestOptions);
    const parsed = await parsedBodyOf(request, requestOptions);
    // A body that is not JSON is the SDK's to answer, in its words.
    if (!parsed) return sdk.fetch(request, requestOptions);
    if (parsed.tooDeep) return Response.json(jsonRpcErrorBody(null, { code: -32700, message: `Parse error: ${TOO_DEEP}` }), { status: 400 });
    const answer = await serveParsed(directRequestOf(request, parsed.body, authInfo), parsed.body, requestOptions);
    return answer instanceof Response ? answer : toWebResponse(answer);
  }

  const serveDirect: DirectServe = async (request) => {
    const refused = foreign(request.header('host'), request.header('origin'));
    if (refused) return refused;
    const unowned = subjectless(request.authInfo);
    if (unowned) return fromWebResponse(unowned);
    // A body the checks refuse (a batch, one nested too deep, an id that is none) is fetch's to answer, before any lane reads it.
    if (refuseRequestBody(request.body) || !fast) return undefined;
    return fast(request);
  };

  const node = nodeListener({
    maxBodyBytes: options.maxBodyBytes,
    onerror: options.onerror,
    refuse: (host, origin, authInfo) => foreign(host, origin) ?? subjectless(authInfo),
    serve: async (request, body) => {
      if (request.method !== 'POST') return sdk.fetch(request.toRequest(), request.authInfo === undefined ? {} : { authInfo: request.authInfo });
      return serveParsed(request, body, request.authInfo === undefined ? {} : { authInfo: request.authInfo });
    },
  });

  return Object.assign(withFetch(sdk, fetch), { serveDirect, node });
}
