import { ErrorCode, JsonRpcError } from '@mcp-tasks/core';

/** How a call in flight answers what its upstream asks (the task's `ctx.elicit`, `sample`, `roots`). */
export interface UpstreamAsker {
  ask(kind: 'elicit' | 'sample' | 'roots', params: unknown): Promise<unknown>;
}

/**
 * Routes an upstream's requests (elicitation, sampling, roots) to the call that caused them. A
 * stdio request carries nothing that names the call it serves, so it goes to the one call in
 * flight; with several in flight on this process it is refused (a documented limit).
 */
export class CallRouter {
  readonly #inFlight = new Set<UpstreamAsker>();

  enter(asker: UpstreamAsker): () => void {
    this.#inFlight.add(asker);
    return () => this.#inFlight.delete(asker);
  }

  async ask(kind: 'elicit' | 'sample' | 'roots', params: unknown): Promise<unknown> {
    if (this.#inFlight.size !== 1) {
      throw new JsonRpcError(ErrorCode.InvalidRequest, this.#inFlight.size === 0 ? 'No call is in flight to answer this request' : 'Several calls are in flight on this process: the gateway cannot tell which one asks');
    }
    const [asker] = this.#inFlight;
    return asker!.ask(kind, params);
  }
}
