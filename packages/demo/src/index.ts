export { startDemoServer, DEMO_SERVER_NAME, type DemoServer } from './demo-server.js';
export { configFromEnv, type DemoConfig } from './config.js';
export { taskTools } from './tools/index.js';
export { OTHER_SERVER_NAME } from './demo-server.js';
export { authFromEnv, DEMO_MCP_PATHS, type DemoAuthConfig } from './auth/auth-config.js';
export { admissionFromEnv } from './limits/admission-env.js';
export { inFlightFromEnv } from './limits/in-flight-env.js';
export { refusalHoldFromEnv } from './limits/refusal-hold-env.js';
export { createEdgeAuth, type EdgeAuth, type EdgeAuthOptions } from './auth/edge-auth.js';
