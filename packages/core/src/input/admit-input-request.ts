import { checkInputRequest } from './check-input-request.js';
import { assertClientSupports, type ClientCapabilities } from './client-capabilities.js';
import type { InputRequest } from './input-request.js';

/**
 * What happens before an input request is stored or sent: it must be one the protocol defines
 * ({@link checkInputRequest}) and one the client declared it can answer
 * ({@link assertClientSupports}). Both the task runtime and the server's inline runs use it, so a
 * tool gets the same typed error either way.
 */
export function admitInputRequest(key: string, request: InputRequest, declared: ClientCapabilities | undefined): void {
  checkInputRequest(key, request);
  assertClientSupports(key, request, declared);
}
