/** The configured name part of a node's id (`NODE_ID/<instance>`): what a test spawned the node as. */
export function nodeName(nodeId: string | null | undefined): string | null | undefined {
  return typeof nodeId === 'string' ? nodeId.replace(/\/[0-9a-f]{16}$/, '') : nodeId;
}
