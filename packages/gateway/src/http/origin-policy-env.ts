import { isLoopbackAddress, LOOPBACK_HOSTS, originPolicyOf, type OriginPolicy } from '@mcp-tasks/server';

/**
 * The node's Host/Origin policy (DNS rebinding protection) from `MCP_TASKS_ALLOWED_HOSTS` and
 * `MCP_TASKS_ALLOWED_ORIGINS` (comma-separated; `*` for any), given the address it binds.
 * Hosts default to the loopback names when bound to loopback (nothing else can reach it but a
 * rebound name), and to any well-formed host otherwise (a load balancer passes clients' names);
 * origins default to none but the node's own host name (and the allowed hosts). A foreign
 * `Origin` is refused whatever the binding.
 */
export function originPolicyFromEnv(env: NodeJS.ProcessEnv, bindAddress: string): OriginPolicy {
  const hosts = listOf(env['MCP_TASKS_ALLOWED_HOSTS']);
  const origins = listOf(env['MCP_TASKS_ALLOWED_ORIGINS']);
  try {
    return originPolicyOf(hosts ?? (isLoopbackAddress(bindAddress) ? LOOPBACK_HOSTS : 'any'), origins ?? []);
  } catch (error) {
    throw new Error(`MCP_TASKS_ALLOWED_HOSTS / MCP_TASKS_ALLOWED_ORIGINS: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function listOf(raw: string | undefined): readonly string[] | 'any' | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() === '*') return 'any';
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
