export { startDemoServer, DEMO_SERVER_NAME, type DemoServer } from './demo-server.js';
export { configFromEnv, type DemoConfig } from './config.js';
export { taskTools } from './tools/index.js';
