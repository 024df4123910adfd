import { validateInputResponse, type InputRequest, type InputResponse } from '@mcp-tasks/core';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

const STATE_PREFIX = 'mcp-tasks.inline.v1:';

/**
 * Thrown inside an inline run when the tool asks for input nobody has answered yet: the request
 * is answered with an MRTR input-required result, and the client's retry replays the tool with
 * the answers so far (each key returns its first answer, as in a task).
 */
export class InlineInputNeeded extends Error {
  constructor(
    readonly key: string,
    readonly request: InputRequest,
  ) {
    super(`input ${key} is needed`);
    this.name = 'InlineInputNeeded';
  }
}

/**
 * The answers an inline run has so far: those carried in the round's `requestState` (earlier
 * rounds) plus the round's `inputResponses`. Answers are untrusted client input either way.
 */
export class InlineAnswers {
  /** By key, in a Map: a key the client chose (`constructor`, `__proto__`) is only ever its own. */
  readonly #answers: Map<string, InputResponse>;

  constructor(requestState: unknown, inputResponses: Readonly<Record<string, unknown>> | undefined) {
    this.#answers = new Map(Object.entries(decodeState(requestState)));
    for (const [key, value] of Object.entries(inputResponses ?? {})) {
      if (!this.#answers.has(key)) this.#answers.set(key, value as InputResponse);
    }
  }

  /** The first answer to `key`, checked against the request it answers; throws {@link InlineInputNeeded} when there is none. */
  answer(key: string, request: InputRequest): InputResponse {
    const response = this.#answers.get(key);
    if (response === undefined) throw new InlineInputNeeded(key, request);
    try {
      validateInputResponse(key, request, response);
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, error instanceof Error ? error.message : String(error));
    }
    return response;
  }

  /** The `requestState` that carries these answers into the next round. */
  encode(): string {
    return STATE_PREFIX + Buffer.from(JSON.stringify(Object.fromEntries(this.#answers)), 'utf8').toString('base64url');
  }
}

function decodeState(state: unknown): Record<string, InputResponse> {
  if (typeof state !== 'string' || !state.startsWith(STATE_PREFIX)) return {};
  try {
    const parsed: unknown = JSON.parse(Buffer.from(state.slice(STATE_PREFIX.length), 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, InputResponse>;
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid requestState: it was not minted by this server');
  }
}
