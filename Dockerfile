# syntax=docker/dockerfile:1
#
# One image for every repo-chat service; the Deployment's command picks the service (default: api).
# The code runs as TypeScript through tsx, exactly as `pnpm --filter @chat/<service> start` and the
# end-to-end tests run it, so there is no build output to copy: the image carries the sources and
# the installed node_modules.
#
# Why all dependencies, dev ones included: tsx (the runtime loader) is a devDependency of every
# package, so `pnpm install --prod` would drop it. Installing everything once and copying the
# result is the simplest correct choice; the cost is mocha, chai and typescript in the image
# (tens of MB). Moving tsx to `dependencies` would allow `--prod` later.
#
# No secret is baked in: configuration comes from the environment (ConfigMap and Secret).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- dependencies and sources -------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
ENV CI=true npm_config_store_dir=/pnpm/store
RUN npm install -g pnpm@10.34.9
WORKDIR /app
# `pnpm fetch` needs the lockfile only, so this layer stays cached until the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch
COPY . .
# .dockerignore leaves out tests/ and infra/: with the lockfile frozen, pnpm installs the workspace
# packages that are present and skips the rest.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --offline

# ---- runtime ------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node and reaps zombies.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 chat \
    && useradd --system --uid 10001 --gid chat --home-dir /tmp --shell /usr/sbin/nologin chat
ENV NODE_ENV=production HOME=/tmp
WORKDIR /app
# Owned by root and not writable by the service user; tsx writes its cache to /tmp only.
COPY --from=build /app /app
USER 10001:10001
EXPOSE 8080 9090 9091 9092
WORKDIR /app/services/api
ENTRYPOINT ["/usr/bin/tini", "--"]
# = `pnpm --filter @chat/api start` (`tsx src/main.ts`) without the pnpm and tsx wrapper processes,
# so SIGTERM reaches the service itself. Other services: set workingDir to /app/services/<name>
# (or /app/packages/store with src/migrate-cli.ts for the migration) and the same command.
CMD ["node", "--import", "tsx", "src/main.ts"]
