/**
 * Child-process entry: the floor of any Node speech gateway, for the peers
 * scenario. node:http in, one undici request out on a keep-alive pool, the
 * body piped back as it arrives; no auth, no policy, no records. What a
 * gateway costs beyond this is what its own features cost.
 * FLOOR_UPSTREAM is the upstream's base URL (…/v1). Prints {"port":N}.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import { Pool } from "undici";

const upstream = new URL(process.env.FLOOR_UPSTREAM ?? "");
const pool = new Pool(upstream.origin, { keepAliveTimeout: 60_000 });
const path = `${upstream.pathname}/audio/speech`;

const server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
  try {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const up = await pool.request({
      method: "POST",
      path,
      body: Buffer.concat(parts),
      headers: { "content-type": "application/json", authorization: "Bearer x" },
    });
    res.writeHead(up.statusCode, {
      "content-type": up.headers["content-type"] ?? "application/octet-stream",
    });
    await pipeline(up.body, res);
  } catch (err) {
    // Mid-body there is no status left to send: a cut-off body tells the client.
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end(String(err));
  }
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
