import { startGatewayNode, type DemoConfig, type GatewayNode, type GatewayNodeOptions } from '@mcp-tasks/gateway';
import { demoModule } from './module.js';

/** The server's name: part of every task's owner, so every node must use the same one. */
export const DEMO_SERVER_NAME = 'mcp-tasks-demo';

/**
 * The second server, at `/other/mcp`: same tools, same store and runtime, another name. Its tasks
 * are not `/mcp`'s (the server is part of the owner), which proves several servers can share a database.
 */
export const OTHER_SERVER_NAME = 'mcp-tasks-other';

/** A running demo node: a gateway node serving the demo's tools. */
export type DemoServer = GatewayNode;

/** The demo node's options: a gateway node's, less what the demo decides. */
export type DemoServerOptions = Omit<GatewayNodeOptions, 'name' | 'otherName' | 'tools' | 'register'>;

/** The gateway node options that make it the demo: its names and its tools. */
export const DEMO_NODE_OPTIONS = { name: DEMO_SERVER_NAME, otherName: OTHER_SERVER_NAME, tools: demoModule.tools, register: demoModule.register } as const;

/** Starts one demo node in this process (what `npm run serve` runs, and the tests embed). */
export function startDemoServer(config: DemoConfig, options: DemoServerOptions = {}): Promise<DemoServer> {
  return startGatewayNode(config, { ...options, ...DEMO_NODE_OPTIONS });
}
