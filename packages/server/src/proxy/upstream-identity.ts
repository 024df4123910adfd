/**
 * Whose identity an upstream sees for a gateway caller's calls, relays and cancels:
 * - `'gateway'` (the default): the gateway's own `token` for every caller, so the gateway is one
 *   owner upstream and shares what it may hold there between its callers (`capacity`);
 * - `{ tokens }`: each caller's own upstream credential from configuration, by the caller's
 *   subject on the gateway (the token's `sub`), so the upstream keeps callers apart (its quota,
 *   rate and task isolation per caller); a caller without one is the gateway, as above;
 * - `'caller'`: the caller's own bearer token passed through, for an upstream that accepts the
 *   gateway's callers' tokens. It is never stored: this node keeps the last one of each subject
 *   in memory for the relays and cancels it runs, and a relay or cancel on a node that has not
 *   seen it uses the gateway's own `token` (prefer `{ tokens }` in a cluster).
 */
export type UpstreamIdentity = 'gateway' | 'caller' | { readonly tokens: Readonly<Record<string, string>> };

/** Subjects whose passed-through token a node keeps (the oldest forgotten first). */
const MAX_CALLER_TOKENS = 10_000;

/** The token a subject's requests carry upstream under an {@link UpstreamIdentity}; `undefined`: the gateway's own. */
export class UpstreamIdentityResolver {
  readonly #identity: UpstreamIdentity;
  readonly #callerTokens = new Map<string, string>();

  constructor(name: string, identity: UpstreamIdentity | undefined) {
    this.#identity = identity ?? 'gateway';
    const valid = this.#identity === 'gateway' || this.#identity === 'caller' || (typeof this.#identity === 'object' && this.#identity !== null && typeof this.#identity.tokens === 'object');
    if (!valid) throw new TypeError(`proxyUpstream(${name}): identity must be 'gateway', 'caller' or { tokens }`);
  }

  /** Whether callers may be apart upstream at all (not every caller the gateway). */
  get separates(): boolean {
    return this.#identity !== 'gateway';
  }

  /** The subject's upstream token; `callerToken` is the bearer token of the request at hand, if any. */
  tokenOf(subject: string | undefined, callerToken?: string): string | undefined {
    if (subject === undefined || this.#identity === 'gateway') return undefined;
    if (this.#identity === 'caller') {
      if (callerToken !== undefined) {
        this.#callerTokens.delete(subject);
        this.#callerTokens.set(subject, callerToken);
        if (this.#callerTokens.size > MAX_CALLER_TOKENS) this.#callerTokens.delete(this.#callerTokens.keys().next().value as string);
        return callerToken;
      }
      return this.#callerTokens.get(subject);
    }
    return Object.hasOwn(this.#identity.tokens, subject) ? this.#identity.tokens[subject] : undefined;
  }
}
