#!/usr/bin/env node
import { runCli } from './cli.js';

const code = await runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text.endsWith('\n') ? text : `${text}\n`}`),
  err: (text) => process.stderr.write(`${text.endsWith('\n') ? text : `${text}\n`}`),
  terminal: {
    input: process.stdin,
    output: process.stderr,
    isTTY: process.stderr.isTTY === true && process.stdin.isTTY === true,
    columns: () => process.stderr.columns ?? 80,
    onInterrupt(handler) {
      process.on('SIGINT', handler);
      return () => process.off('SIGINT', handler);
    },
  },
});
process.exitCode = code;
