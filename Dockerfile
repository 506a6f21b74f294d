# syntax=docker/dockerfile:1
#
# One image for every repo-chat service; the Deployment's workingDir and command pick the service
# (default: the API). Each service runs as compiled JavaScript with plain `node`: the build stage
# compiles the workspace (`tsc` into each package's dist/, then esbuild bundles each service's entry
# into one file: scripts/bundle-service.mjs) with the development dependencies, then
# `pnpm deploy --prod` writes the all-in-one package (which depends on every service) with its
# production dependencies only: each workspace package contributes what its package.json `files`
# lists (dist/, and the migrations and the OpenAPI document where needed). The runtime stage copies
# that output and nothing else: no sources, tests, fixtures, tsx, mocha or typescript.
# tests/build/production-image.test.ts runs the same deploy command and checks the resulting files.
#
# Layout: /app is the all-in-one package; every other package is /app/node_modules/@chat/<name>, so
# a service runs as `node dist/main.js` in its package folder, exactly its package.json "start".
#
# No secret is baked in: configuration comes from the environment (ConfigMap and Secret).

# The base image by digest (its multi-platform index), so a rebuild of a commit gets the same base
# and a moved upstream tag changes nothing; infra/k8s-validate refuses a FROM without one. Bump it
# on purpose (security updates): `docker buildx imagetools inspect node:20-bookworm-slim` prints the
# tag's current digest.
ARG NODE_IMAGE=node:20-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0

# ---- build: install everything, compile, deploy the production tree -------------------------------
FROM ${NODE_IMAGE} AS build
ENV CI=true npm_config_store_dir=/pnpm/store TURBO_TELEMETRY_DISABLED=1
RUN npm install -g pnpm@10.34.9
WORKDIR /src
# `pnpm fetch` needs the lockfile only, so this layer stays cached until the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch
COPY . .
# .dockerignore leaves out tests/, infra/, test folders and any local dist/: with the lockfile
# frozen, pnpm installs the workspace packages that are present and skips the rest.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --offline
# Compiles the all-in-one and every workspace package it depends on, dependencies first.
RUN pnpm --filter "@chat/all-in-one..." run build
# Installs the all-in-one's production dependencies from the lockfile into /deploy, with the
# workspace packages it uses copied in (their `files`: dist/ and what it reads at run time).
# inject-workspace-packages is set for this command only: the new deploy needs it, while the
# development install keeps linking the workspace packages.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm --config.inject-workspace-packages=true --filter=@chat/all-in-one deploy --prod --offline /deploy

# ---- runtime ------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node and reaps zombies.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 chat \
    && useradd --system --uid 10001 --gid chat --home-dir /tmp --shell /usr/sbin/nologin chat
ENV NODE_ENV=production HOME=/tmp
# Owned by root and not writable by the service user.
COPY --from=build /deploy /app
USER 10001:10001
EXPOSE 8080 9090 9091 9092
ENTRYPOINT ["/usr/bin/tini", "--"]
# = `pnpm --filter @chat/api start` (`node dist/main.js`) without the pnpm wrapper process, so
# SIGTERM reaches the service itself. Other services: workingDir /app/node_modules/@chat/<name>
# (stream-gateway, notifier, ingress-errors, viewer; /app/node_modules/@chat/store with
# dist/migrate-cli.js for the migration), same command.
WORKDIR /app/node_modules/@chat/api
CMD ["node", "dist/main.js"]
