/**
 * Child-process entry: the management baseline. A bare node:http server that
 * answers every request (any method and path, body read to the end) with the
 * value of ONE Redis GET, through ioredis against the same throwaway Redis as
 * the system. That is the floor a Redis-backed JSON API could reach on this
 * machine; the gateway's ratio to it shows what its layers (auth, gRPC hop,
 * protobuf, validation) cost. Prints {"port":N} once listening.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";

const url = process.env.REDIS_URL;
const key = process.env.BASELINE_KEY;
if (!url || !key) throw new Error("REDIS_URL and BASELINE_KEY are required");
const redis = new Redis(url);

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  req.resume();
  req.once("end", () => {
    redis.get(key).then(
      (value) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(value ?? "{}");
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once("SIGTERM", () => {
  server.close(() => {
    redis.disconnect();
    process.exit(0);
  });
  server.closeAllConnections();
});
