#!/usr/bin/env node
import { runCli } from './cli.js';

const code = await runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text.endsWith('\n') ? text : `${text}\n`}`),
  err: (text) => process.stderr.write(`${text.endsWith('\n') ? text : `${text}\n`}`),
});
process.exitCode = code;
