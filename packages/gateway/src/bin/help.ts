/** What `mcp-tasks-gateway --help` prints. */
export const GATEWAY_HELP = `Usage: mcp-tasks-gateway [--config FILE]

Serves MCP at /mcp with durable tasks (io.modelcontextprotocol/tasks and 2025-11-25 tasks), in
front of the MCP servers the configuration names, and the in-process task tools of its modules.

  --config FILE   the configuration file, YAML or JSON (or MCP_TASKS_GATEWAY_CONFIG=FILE). Checked
                  at start, before any database connection: a bad file is one sentence naming the
                  field, and exit code 2. \${VAR} in a string is read from the environment.

    name: my-gateway              # the server's name (part of every task's owner)
    upstreams:
      - name: files               # tools served as files_<tool> (prefix: overrides, may be "")
        url: http://files.internal/mcp
        token: \${FILES_TOKEN}
        revision: 2025-11-25      # of an HTTP upstream; default 2026-07-28
      - name: local               # stdio: each node spawns its own process, shared by every caller
        command: node
        args: [./server.js]
        env: { ROOT: /srv/data }
        retry: idempotent         # a plain tool's task is run again on another node if its node dies
        scopes: [local]           # with auth on: what a caller needs for its tools
    modules: [./my-tools.js]      # in-process task tools: export tools (and register)

  -h, --help      this text

The node itself is configured from the environment: PORT, HOST, DATABASE_URL, DIRECT_DATABASE_URL,
NODE_ID, MCP_TASKS_TOKENS, MCP_TASKS_LEASE_MS, MCP_TASKS_DRAIN_MS, MCP_TASKS_POLL_INTERVAL_MS,
MCP_TASKS_TTL_MS, MCP_TASKS_MAX_PER_PRINCIPAL, MCP_TASKS_MAX_RUNS, MCP_TASKS_CONSOLE_TOKEN,
MCP_TASKS_METRICS_TOKEN, MCP_TASKS_LOG_LEVEL, MCP_TASKS_UPSTREAM_URL (one upstream, tools served as
upstream_<tool>) and the rest of docs/gateway.md.
`;
