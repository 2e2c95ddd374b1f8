# The reference Off-Peak Gateway as a container image, built from the bundle: run `npm ci` and
# `npm run build` first (they write dist/gateway.js), then, from the repository root,
#   docker build -f deploy/gateway.Dockerfile -t offpeak-gateway .
# Only package.json, package-lock.json, the bundle and the health check go into the build context
# (deploy/gateway.Dockerfile.dockerignore). The image holds the production dependencies alone
# (`npm ci --omit=dev`: better-sqlite3 for the SQLite store, mysql2 for MySQL), runs as the
# unprivileged `node` user, and keeps its SQLite file in the volume /var/lib/offpeak-gateway.
# docs/gateway.md#deploy-it says how to run it; its options are the gateway's environment variables.

FROM node:20-bookworm-slim AS production-dependencies
WORKDIR /opt/offpeak-gateway
# better-sqlite3 is native: a toolchain in case no prebuilt binary fits (this stage is thrown away).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    OFFPEAK_GATEWAY_HOST=0.0.0.0 \
    OFFPEAK_GATEWAY_PORT=8787 \
    OFFPEAK_GATEWAY_OPS_LISTEN=0.0.0.0:8788 \
    OFFPEAK_GATEWAY_DB=/var/lib/offpeak-gateway/gateway.sqlite
WORKDIR /opt/offpeak-gateway
COPY --from=production-dependencies /opt/offpeak-gateway/node_modules ./node_modules
COPY package.json ./
COPY dist/gateway.js ./dist/gateway.js
COPY deploy/gateway-healthcheck.mjs ./deploy/gateway-healthcheck.mjs
RUN mkdir -p /var/lib/offpeak-gateway && chown node:node /var/lib/offpeak-gateway
VOLUME ["/var/lib/offpeak-gateway"]
USER node
# 8787: the ticket API and the model proxy; 8788: /healthz and /metrics alone (the ops address).
EXPOSE 8787 8788
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "deploy/gateway-healthcheck.mjs"]
# SIGTERM lets in-flight requests finish (--shutdown-grace-ms); give `docker stop -t` a bit more.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/gateway.js"]
