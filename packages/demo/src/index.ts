export { startDemoServer, DEMO_SERVER_NAME, OTHER_SERVER_NAME, DEMO_NODE_OPTIONS, type DemoServer, type DemoServerOptions } from './demo-node.js';
export { taskTools } from './tools/index.js';
export { demoModule } from './module.js';
