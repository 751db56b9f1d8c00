# syntax=docker/dockerfile:1
# Railgate: one image for every component; docker-compose picks the command per container.
#
#   docker build -t railgate .
#       with the embedded eSpeak NG engine (GPL-3.0, see README "Licences")
#   docker build --build-arg WITH_ESPEAK=false -t railgate:no-espeak .
#       without it: Railgate's own Apache-2.0 code and permissive dependencies only; the
#       embedded model is skipped at start-up (logged) and upstream providers serve speech
#
# PID 1: the processes handle SIGTERM/SIGINT themselves (they drain for RAILGATE_SHUTDOWN_GRACE_MS) and
# spawn no child processes, only worker threads, so nothing needs reaping. Run with
# `docker run --init` (docker-compose: `init: true`) to get tini as PID 1 anyway: it forwards
# signals and reaps whatever a debugging shell leaves behind.

ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: TypeScript and the other dev dependencies; only dist/ leaves this stage ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY gen ./gen
COPY apps ./apps
COPY domain ./domain
COPY platform ./platform
COPY store ./store
COPY governance ./governance
COPY services ./services
COPY gateway ./gateway
# What ships (tsconfig.build.json): test/ and bench/ are neither copied, built nor shipped.
RUN npx tsc -p tsconfig.build.json
# The embedded database's data-folder template (store/request-log/data-dir-template.ts): initdb
# and its memory peak happen here, once, instead of in a container's first start.
RUN node dist/store/request-log/build-template.js

# ---- runtime: Node 22 LTS, production dependencies only, unprivileged ----
FROM ${NODE_IMAGE} AS runtime
ARG WITH_ESPEAK=true
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No install script is needed at run time (checked with Node 20, no Docker engine: the services start from
# `npm ci --omit=dev --ignore-scripts`). Without eSpeak, its package directory is removed rather
# than the lock file edited, so both builds install exactly the locked versions of everything else.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && if [ "$WITH_ESPEAK" = "false" ]; then rm -rf node_modules/@echogarden/espeak-ng-emscripten; fi \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
# The console's static files (HTML, ES modules, CSS): tsc does not copy them; the gateway reads
# them from ./console next to dist/.
COPY console ./console
COPY LICENSE README.md ./
# The image's files stay root-owned and read-only to the process: it writes nothing but logs (stdout).
USER node
# 8080/8081/8082: the gateway's global/europe/us listeners; 50051/50052: guardrail/speech gRPC.
EXPOSE 8080 8081 8082 50051 50052
# The default command runs everything in one process, so the gateway's /healthz (which asks both
# services) is the health of the container. Slim images have no curl: node's fetch asks instead.
# docker-compose overrides this per container (gRPC health for the service containers).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.RAILGATE_GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# One V8 helper thread (Node's default is 4) for the one-process system, as `npm start` runs it:
# on a 2-core host the four GC helpers competed with the request thread (README "Performance",
# issue 21: CPU per request at 50 connections -35 to -50 %). The split services keep Node's
# default pool (docker-compose.yml, the Helm chart).
# The old generation may grow to 2.5x what a full collection left before the next one: with V8's
# own factor the one-process system ran 2-3 full collections a second at 1 connection, while
# its live heap (mostly loaded code) stayed at ~46 MB (README "Performance", issue 21 fourth
# part: CPU per request at 1 connection -7 to -28 %, at 50 unchanged, peak RSS +30 MB).
CMD ["node", "--v8-pool-size=1", "--heap-growing-percent=150", "dist/apps/all-in-one/main.js"]
