import * as z from 'zod';

/** An upstream's name: what errors, task rows and the default tool prefix call it. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** How a node may run a plain tool's task again after losing it: `idempotent` (another node runs it again) or `never` (it fails with its node). */
const RETRY = z.enum(['idempotent', 'never']);

/** One upstream MCP server: HTTP (`url`) or stdio (`command`), exactly one of them. */
export const upstreamSchema = z
  .strictObject({
    name: z.string().regex(NAME, 'must be 1-64 letters, digits, _ or -').describe('The upstream\'s name; its tools are served as `<name>_<tool>` unless `prefix` says otherwise.'),
    url: z.url({ protocol: /^https?$/ }).optional().describe('Its Streamable HTTP endpoint (either revision, see `revision`).'),
    command: z.string().min(1).optional().describe('A stdio server: the program each gateway node spawns.'),
    args: z.array(z.string()).optional().describe('The stdio program\'s arguments.'),
    env: z.record(z.string(), z.string()).optional().describe('Variables added to the stdio program\'s environment.'),
    cwd: z.string().optional().describe('The stdio program\'s working directory (relative: to the configuration file).'),
    token: z.string().min(1).optional().describe('The bearer token the gateway presents to an HTTP upstream.'),
    revision: z.enum(['2026-07-28', '2025-11-25']).optional().describe('The protocol revision of an HTTP upstream (default 2026-07-28).'),
    prefix: z.string().regex(/^[A-Za-z0-9_-]{0,64}$/, 'must be at most 64 letters, digits, _ or -').optional().describe('What goes before each tool\'s name instead of `<name>_` (may be empty).'),
    retry: z.union([RETRY, z.record(z.string(), RETRY)]).optional().describe('For plain tools: `idempotent` (another node runs a task again when its node dies) or `never` (default), for all its tools or by tool name.'),
    scopes: z.array(z.string().min(1)).optional().describe('With auth on: the scopes a caller needs for every tool of this stdio upstream (refused on an HTTP upstream).'),
  })
  .superRefine((upstream, ctx) => {
    if ((upstream.url === undefined) === (upstream.command === undefined)) ctx.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of url (HTTP) or command (stdio)' });
    if (upstream.command === undefined) {
      for (const key of ['args', 'env', 'cwd'] as const) if (upstream[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is for a stdio upstream (command)' });
      // The proxy's relay of an HTTP upstream checks no scopes of its own: a setting it would ignore is refused, never left to look like a protection.
      if (upstream.scopes !== undefined) ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'is for a stdio upstream (command): the relay of an HTTP upstream checks no scopes in this version' });
    } else {
      for (const key of ['token', 'revision'] as const) if (upstream[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is for an HTTP upstream (url)' });
    }
  });

/** The gateway's configuration file (`--config FILE` or `MCP_TASKS_GATEWAY_CONFIG`), YAML or JSON. */
export const gatewayConfigSchema = z
  .strictObject({
    name: z.string().min(1).optional().describe('The server\'s name, part of every task\'s owner: every node must use the same one (default mcp-tasks-gateway).'),
    upstreams: z.array(upstreamSchema).optional().describe('The MCP servers whose tools the gateway serves.'),
    modules: z.array(z.string().min(1)).optional().describe('ES modules of in-process task tools (relative: to the configuration file); each exports `tools` (and `register`), or a default export with them.'),
  })
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    (config.upstreams ?? []).forEach((upstream, index) => {
      const before = seen.get(upstream.name);
      if (before !== undefined) ctx.addIssue({ code: 'custom', path: ['upstreams', index, 'name'], message: `repeats the name of upstreams[${before}] (${upstream.name})` });
      seen.set(upstream.name, index);
    });
  });

export type UpstreamConfig = z.output<typeof upstreamSchema>;
export type GatewayFileConfig = z.output<typeof gatewayConfigSchema>;
