import type { Logger } from '@mcp-tasks/core';
import type { AnyTaskTool, UpstreamMount } from '@mcp-tasks/server';
import { ConfigFileError } from '../config-file/config-file-error.js';

/** How long a starting node waits for an HTTP upstream's tool list before it starts without checking it. */
const HTTP_LIST_MS = 10_000;

/**
 * The names a node serves and where each comes from: a second tool under a name already served is
 * refused at start, naming both (a client could reach only one of them, and `tools/list` would
 * list the name twice).
 */
export class ServedNames {
  readonly #from = new Map<string, string>();

  add(name: string, from: string): void {
    const before = this.claim(name, from);
    if (before !== undefined) throw new ConfigFileError(collision(name, before, from));
  }

  /** Takes `name` for `from` when it is free; else changes nothing and answers where it is served from. */
  claim(name: string, from: string): string | undefined {
    const before = this.#from.get(name);
    if (before === undefined) this.#from.set(name, from);
    return before;
  }

  copy(): ServedNames {
    const copy = new ServedNames();
    for (const [name, from] of this.#from) copy.#from.set(name, from);
    return copy;
  }
}

/** The sentence that names both tools of one name. */
export function collision(name: string, before: string, from: string): string {
  return `Two tools would be served as ${name}: from ${before} and from ${from}; give an upstream another prefix.`;
}

/** The module tools and the stdio upstreams' plain tools, refused when two have one name. */
export function distinctTools(names: ServedNames, own: readonly AnyTaskTool[], upstream: ReadonlyArray<{ readonly tool: AnyTaskTool; readonly from: string }>): readonly AnyTaskTool[] {
  const all = [...own.map((tool) => ({ tool, from: 'a module' })), ...upstream];
  for (const { tool, from } of all) names.add(tool.name, from);
  return all.map(({ tool }) => tool);
}

/**
 * Adds each HTTP upstream's tools as listed now. An upstream that does not list them within a
 * bound is not waited for: the node starts (the proxy keeps fetching), and is said not to be checked.
 */
export async function addHttpUpstreamTools(names: ServedNames, mounts: readonly UpstreamMount[], logger: Logger): Promise<void> {
  const lists = await Promise.all(
    mounts.map(async (mount) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), HTTP_LIST_MS)));
      try {
        return await Promise.race([mount.tools(), late]);
      } catch {
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  mounts.forEach((mount, index) => {
    const tools = lists[index];
    if (tools === undefined) {
      logger.warn({ upstream: mount.name }, 'the HTTP upstream did not list its tools at start: its names are not checked against the others (a module or stdio tool of the same name wins, then the first upstream)');
      return;
    }
    for (const [exposed, tool] of tools) names.add(exposed, `upstream ${mount.name} (${tool.upstream.name})`);
  });
}
