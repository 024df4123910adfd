import { configFromEnv } from '../config.js';
import { startDemoServer } from '../demo-server.js';

const server = await startDemoServer(configFromEnv(process.env));
console.log(`mcp-tasks demo listening on ${server.url}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`mcp-tasks demo: ${signal}, draining`);
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('mcp-tasks demo: shutdown failed:', error);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
