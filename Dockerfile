# torii in a container: `docker build -t torii .` then
#   docker run -p 8787:8787 -e TORII_MASTER_KEY=sk-... -e OPENAI_API_KEY=sk-... -v torii-data:/data torii
# (compose.yaml runs the production shape: Postgres for keys and the ledger, Redis for limits and circuits).
#
# Two stages: the build stage installs the locked dependencies, builds and packs the npm package; the runtime stage
# installs only that package (dist/server.js bundles what it runs; no dependencies of its own) and gpt-tokenizer, the
# one optional package a server uses by default (counting tokens for OpenAI models' count_tokens), as the non-root
# `node` user, with a health check on /health/ready.

FROM node:24-bookworm-slim AS build
WORKDIR /source
RUN npm install --global pnpm@11.28.11 --no-audit --no-fund --loglevel=error
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm install --frozen-lockfile
COPY . .
RUN pnpm build && npm pack --pack-destination /tmp --loglevel=error && mv /tmp/torii-gateway-*.tgz /tmp/torii-gateway.tgz

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8787 \
    TORII_DATA_DIR=/data
WORKDIR /app
COPY --from=build /tmp/torii-gateway.tgz /tmp/torii-gateway.tgz
RUN npm install --omit=dev --no-audit --no-fund --loglevel=error /tmp/torii-gateway.tgz gpt-tokenizer@4.0.0 \
    && rm /tmp/torii-gateway.tgz \
    && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) drains: in-flight requests and streams finish, queued usage is written; allow it with
# `docker stop -t 35` (TORII_SHUTDOWN_GRACE_MS is 25 s by default).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "node_modules/torii-gateway/dist/server.js"]
