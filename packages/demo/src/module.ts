import { registerGreet, taskTools } from './tools/index.js';

/** The demo's tools as a gateway module (`modules: [...]` in a gateway configuration loads the same shape). */
export const demoModule = { tools: taskTools, register: registerGreet };

export default demoModule;
