import { ProtocolError, ProtocolErrorCode, type AuthInfo } from '@modelcontextprotocol/server';

/**
 * The scopes in `required` that the token does not grant. Without a token (no authorization on
 * the endpoint) nothing is missing: scopes are an authorization matter.
 */
export function missingScopes(required: readonly string[], authInfo: AuthInfo | undefined): string[] {
  if (authInfo === undefined) return [];
  const granted = new Set(authInfo.scopes);
  return required.filter((scope) => !granted.has(scope));
}

/** Whether the token lacks any scope of `required` (never without a token): the one scope check of every lane. */
export function lacksScopes(required: readonly string[], authInfo: AuthInfo | undefined): boolean {
  return missingScopes(required, authInfo).length > 0;
}

/**
 * The JSON-RPC answer for a token without a task's (or task tool's) scopes, used when the check
 * runs inside a handler. Served through `createMcpHandler`, the same check runs earlier as an SDK
 * scope challenge and answers HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`;
 * this error is the fallback for hosts that dispatch some other way.
 */
export class InsufficientScopeError extends ProtocolError {
  readonly scopes: readonly string[];

  constructor(scopes: readonly string[]) {
    super(ProtocolErrorCode.InvalidRequest, `insufficient_scope: this needs scope ${scopes.map((s) => JSON.stringify(s)).join(', ')}`, {
      error: 'insufficient_scope',
      scope: scopes.join(' '),
    });
    this.scopes = scopes;
  }
}

/** Throws {@link InsufficientScopeError} (naming every required scope) when the token lacks any of them. */
export function assertScopes(required: readonly string[], authInfo: AuthInfo | undefined): void {
  if (lacksScopes(required, authInfo)) throw new InsufficientScopeError(required);
}
