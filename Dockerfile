# One image for every component; docker-compose picks the entrypoint per container.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx tsc -p tsconfig.json && npm prune --omit=dev
ENV NODE_ENV=production
EXPOSE 8080 8081 8082 50051 50052
CMD ["node", "dist/services/main.js"]
