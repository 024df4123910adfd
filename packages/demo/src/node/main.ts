// First: the gateway's node runner starts the OpenTelemetry SDK before anything else is imported.
import { runNode } from '@mcp-tasks/gateway/run-node';
import { DEMO_NODE_OPTIONS } from '../demo-node.js';

// `npm run serve`: the gateway's node with the demo's tools as its module.
await runNode({ ...DEMO_NODE_OPTIONS, label: 'mcp-tasks demo' });
