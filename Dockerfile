# The image behind the `api` and `worker` services of docker-compose.yml.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# The console's static build, made here: the app folder is not the node user's to write at run time.
RUN npm run build:console
ENV NODE_ENV=production
USER node
EXPOSE 8080
CMD ["node", "--import", "tsx", "api/main.ts"]
