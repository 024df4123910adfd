/** A JSON-RPC error the server answered with. */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** How far a request that failed in transit got: `refused` never reached the server; `lost` may have. */
export type Reach = 'refused' | 'lost';

/** The server could not be reached or answered something that is not JSON-RPC. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    /** Set when the server was out of reach (a connection failure, a gateway's 502/503/504): worth a retry. */
    readonly reach?: Reach,
  ) {
    super(message);
  }
}

export type JsonObject = Record<string, any>;

/** What following a call needs of a client, whichever revision it speaks. */
export interface RpcClient {
  request(method: string, params: JsonObject, signal?: AbortSignal): Promise<JsonObject>;
}
