import type { AnyTaskTool } from './define-tool.js';

/**
 * Task tools whose list changes while a handler serves them (a gateway's upstream that said
 * `notifications/tools/list_changed`). A handler given one ({@link McpTasksHandlerOptions.liveTools})
 * serves each new request the list of that moment and lets this node claim every tool it ever
 * listed; a tool taken out is no longer listed nor called (its tasks already made still run).
 */
export class LiveTaskTools {
  #tools: readonly AnyTaskTool[];
  readonly #listeners = new Set<(tools: readonly AnyTaskTool[]) => void>();

  constructor(tools: readonly AnyTaskTool[] = []) {
    this.#tools = [...tools];
  }

  /** The tools served now. */
  current(): readonly AnyTaskTool[] {
    return this.#tools;
  }

  /**
   * Serves `tools` instead from the next request on. Throws, and changes nothing for a handler
   * that refuses it, when a name is served twice (with the handler's own `tools` too).
   */
  replace(tools: readonly AnyTaskTool[]): void {
    const names = new Set<string>();
    for (const tool of tools) {
      if (names.has(tool.name)) throw new Error(`LiveTaskTools: two task tools are named ${tool.name}`);
      names.add(tool.name);
    }
    const before = this.#tools;
    this.#tools = [...tools];
    try {
      for (const listener of this.#listeners) listener(this.#tools);
    } catch (error) {
      this.#tools = before;
      for (const listener of this.#listeners) listener(before);
      throw error;
    }
  }

  /** Called with the new list by {@link replace}; a throw refuses the list. */
  onChange(listener: (tools: readonly AnyTaskTool[]) => void): void {
    this.#listeners.add(listener);
  }
}
