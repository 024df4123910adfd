#!/usr/bin/env node
// The file npm links as the `mcp-tasks` bin. npm links bins before `prepare` builds dist/, and
// skips a bin whose file does not exist yet, so in a fresh checkout `npx mcp-tasks` would find
// no local command and fetch an unrelated package of that name instead: this file is committed.
await import('../dist/main.js');
