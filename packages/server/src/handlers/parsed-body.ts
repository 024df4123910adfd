import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';

/**
 * A POST's JSON body, parsed at most once along the handler chain: the `parsedBody` a host (or an
 * earlier wrapper) passed, else parsed here from a clone, so the request still reaches the SDK
 * unread. `undefined` when the body is not JSON: that is the SDK's to answer.
 */
export async function parsedBodyOf(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<{ readonly body: unknown } | undefined> {
  if (requestOptions?.parsedBody !== undefined) return { body: requestOptions.parsedBody };
  try {
    return { body: JSON.parse(await request.clone().text()) };
  } catch {
    return undefined;
  }
}
