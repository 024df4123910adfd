#!/usr/bin/env node
// First: starts the OpenTelemetry SDK (see run-node.ts).
import { runNode } from './run-node.js';

await runNode();
