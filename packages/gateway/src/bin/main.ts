#!/usr/bin/env node
// First: starts the OpenTelemetry SDK (see run-node.ts).
import { runNode } from './run-node.js';
import { ConfigFileError } from '../config-file/config-file-error.js';
import { loadConfigFile } from '../config-file/load-config-file.js';
import { loadModules } from '../modules/load-modules.js';
import { GATEWAY_HELP } from './help.js';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(GATEWAY_HELP);
  process.exit(0);
}

try {
  let file = process.env['MCP_TASKS_GATEWAY_CONFIG'] || undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--config') file = argv[++index];
    else if (arg.startsWith('--config=')) file = arg.slice('--config='.length);
    else throw new ConfigFileError(`Unknown argument ${JSON.stringify(arg)}; see mcp-tasks-gateway --help.`);
    if (file === undefined || file === '') throw new ConfigFileError('--config needs a file.');
  }
  // The whole file and its modules are checked before any database connection.
  const loaded = file === undefined ? undefined : loadConfigFile(file, process.env);
  const modules = loaded?.config.modules ? await loadModules(loaded.config.modules, loaded.directory) : undefined;
  await runNode({
    ...(loaded?.config.name ? { name: loaded.config.name } : {}),
    ...(loaded?.config.upstreams ? { upstreams: loaded.config.upstreams } : {}),
    ...(loaded ? { configDirectory: loaded.directory } : {}),
    ...(modules ? { tools: modules.tools, register: modules.register } : {}),
  });
} catch (error) {
  if (!(error instanceof ConfigFileError)) throw error;
  process.stderr.write(`mcp-tasks-gateway: ${error.message}\n`);
  process.exit(error.exitCode);
}
