/**
 * Child-process entry: an OpenAI-compatible speech upstream on loopback that
 * answers every POST /v1/audio/speech with the SAME 2-second PCM clip
 * (24 kHz, 16-bit, mono = 96,000 bytes) in fixed chunks, as fast as the
 * socket takes them. No artificial delays: the gateway-vs-direct difference
 * is then the proxy's own cost. It runs in its own process so its CPU does not
 * share the load generator's event loop (that would blur the TTFB numbers).
 * Prints {"port":N} on stdout once listening; GET /health answers
 * {"served":N}, the clips started so far, so a run can prove every request
 * reached the upstream (no gateway cached or dropped any).
 *
 * BENCH_UPSTREAM_CHUNK_BYTES sets the chunk size (default 8,000);
 * BENCH_UPSTREAM_CHUNK_TURNS=1 writes each chunk one event-loop turn after
 * the last, so each leaves as its own write. The peers scenario uses 9,600 and
 * turns: the 10 chunks of ../shared/peers' fake upstream, so both agree.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { CLIP_BYTES, SAMPLE_RATE } from "./constants.js";

const CHUNK_BYTES = Number(process.env.BENCH_UPSTREAM_CHUNK_BYTES || 8_000);
const CHUNK_TURNS = process.env.BENCH_UPSTREAM_CHUNK_TURNS === "1";
let served = 0;

function clip(): Buffer {
  // A 440 Hz tone: real-looking samples, built once and shared by every response.
  const samples = new Int16Array(CLIP_BYTES / 2);
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(8_000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE));
  }
  return Buffer.from(samples.buffer);
}

const CLIP = clip();
const CHUNKS: Buffer[] = [];
for (let o = 0; o < CLIP.length; o += CHUNK_BYTES) CHUNKS.push(CLIP.subarray(o, o + CHUNK_BYTES));

function reject(res: import("node:http").ServerResponse, status: number, message: string) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "bench_error", code: status } }));
}

const server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  if (req.method === "GET" && req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ served }));
  }
  if (req.method !== "POST" || req.url !== "/v1/audio/speech") return reject(res, 404, "no route");
  let body: { response_format?: string; input?: unknown };
  try {
    body = JSON.parse(Buffer.concat(parts).toString("utf8"));
  } catch {
    return reject(res, 400, "body is not JSON");
  }
  if (typeof body.input !== "string" && !Array.isArray(body.input))
    return reject(res, 400, "no input");
  // Only PCM: the clip is fixed; a request for anything else is a bench bug worth seeing.
  if ((body.response_format ?? "pcm") !== "pcm")
    return reject(res, 400, "bench upstream serves pcm only");
  served++;
  res.writeHead(200, { "content-type": `audio/pcm;rate=${SAMPLE_RATE}` });
  for (const [i, chunk] of CHUNKS.entries()) {
    if (i > 0 && CHUNK_TURNS) await nextTurn();
    if (res.destroyed) return;
    if (!res.write(chunk)) await once(res, "drain").catch(() => {});
  }
  res.end();
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
