import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { cpuTimeMs, machineBusyMs, ownCpuMs } from "./processes.js";
import { type Summary, summarize } from "./stats.js";

export interface LoadRequest {
  method: "GET" | "POST" | "PATCH";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  /** Origin, e.g. http://127.0.0.1:1234 */
  origin: string;
  connections: number;
  /** Seconds of load; ignored when `amount` is set. */
  duration?: number;
  /** Total requests, then stop (sequential samples with connections = 1). */
  amount?: number;
  /** Per-request time-out; long syntheses need more than autocannon's 10 s default. */
  timeoutSeconds?: number;
  /**
   * What each connection sends, in a loop. A function gets the connection's
   * index, so e.g. each connection can PATCH its own guardrail.
   */
  requests: LoadRequest[] | ((connection: number) => LoadRequest[]);
  /** Server process whose CPU time over the run is reported (all its threads). */
  serverPid?: number;
  /** More server processes, by name (a split deployment): each one's CPU is reported. */
  cpuPids?: Record<string, number>;
  /** Names the measured run, so BENCH_CPU_PROF can cut the server's profile to it. */
  label?: string;
}

/**
 * When each labelled run happened, on the monotonic clock V8's CPU profiles
 * use (process.hrtime == CLOCK_MONOTONIC), so a system-wide profile can be
 * summarized per measurement instead of mixing start-up and every scenario.
 */
export interface MeasurementWindow {
  label: string;
  serverPid: number;
  startUs: number;
  endUs: number;
}
export const measurementWindows: MeasurementWindow[] = [];

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

export interface LoadResult {
  connections: number;
  durationSeconds: number;
  /** Responses that completed with 2xx. */
  completed: number;
  reqPerSec: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  /** Request written -> response head parsed (what a client sees as "first byte"); 2xx only. */
  ttfbMs: Summary;
  /** Request written -> first body byte (the first audio for speech). */
  firstBodyByteMs: Summary;
  /** Request written -> response complete. */
  totalMs: Summary;
  /** Body bytes of 2xx responses, including those cut off when the run ended. */
  bodyBytes: number;
  /** First non-2xx body seen, to make failures diagnosable. */
  sampleError?: string;
  /** CPU time the server process used during the run, and per completed request. */
  serverCpuMs?: number;
  serverCpuMsPerRequest?: number;
  /** CPU ms per completed request of each process in `cpuPids`. */
  cpuMsPerRequestByProcess?: Record<string, number>;
  /**
   * Cores kept busy during the run by processes that are NOT the bench or its
   * children (other jobs on the machine). Anything above ~0.1 means the
   * numbers were taken on a noisy machine.
   */
  foreignCpuCores?: number;
}

/** http-parser-js's callback slots (static indexes on the parser's class). */
interface ParserLike {
  constructor: { kOnBody: number };
  [slot: number]: (chunk: Buffer, start: number, len: number) => unknown;
}

/**
 * One autocannon run, with per-request timings captured through the
 * `setupClient` hook, because autocannon reports only total latency. With
 * pipelining 1 a connection has one request in flight, so the client's
 * 'request' event (emitted as it writes) and 'headers' event (response head
 * parsed) bracket exactly that request's time to first byte.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const ttfb: number[] = [];
  const firstBody: number[] = [];
  const total: number[] = [];
  const statuses: Record<string, number> = {};
  let bodyBytes = 0;
  let sampleError: string | undefined;
  let nextConnection = 0;
  let lastResponseAt = 0;
  const perConnection = typeof options.requests === "function" ? options.requests : undefined;
  const shared = Array.isArray(options.requests) ? options.requests : undefined;

  const setupClient = (client: autocannon.Client) => {
    const index = nextConnection++;
    const requests = perConnection ? perConnection(index) : shared;
    if (requests) client.setRequests(requests as autocannon.Request[]);
    let startedAt = 0;
    let headersAt = 0;
    let firstBodyAt = 0;
    let status = 0;
    let errorBody = "";
    let hooked = false;
    // 'request' exists on autocannon's client but not in its type definitions.
    const emitter: NodeJS.EventEmitter = client;
    emitter.on("request", () => {
      // The parser's body callback is installed after setupClient runs, so it
      // is wrapped on the first request: body bytes (not wire bytes, which
      // include headers and chunk framing) are what audio seconds need.
      if (!hooked) {
        hooked = true;
        const parser = (client as unknown as { parser: ParserLike }).parser;
        const slot = parser.constructor.kOnBody;
        const original = parser[slot];
        if (typeof original !== "function")
          throw new Error("autocannon internals changed: no kOnBody");
        parser[slot] = (chunk, start, len) => {
          const ok = status >= 200 && status < 300;
          if (firstBodyAt === 0) {
            firstBodyAt = performance.now();
            if (ok) firstBody.push(firstBodyAt - startedAt);
          }
          if (ok) {
            bodyBytes += len;
            // Not handed on: autocannon would append every chunk to a string
            // (a UTF-8 decode of binary audio) that only verifyBody needs. At
            // 96 KB per response that made the load generator, not the server,
            // the bottleneck on a 2-core machine.
            return;
          } else if (errorBody.length < 500)
            errorBody += chunk.subarray(start, start + len).toString();
          return original.call(parser, chunk, start, len);
        };
      }
      startedAt = performance.now();
      headersAt = 0;
      firstBodyAt = 0;
      status = 0;
      errorBody = "";
    });
    client.on("headers", (info) => {
      headersAt = performance.now();
      status = (info as unknown as { statusCode: number }).statusCode;
      // Recorded now, not at completion: a long stream cut off by the end of
      // the run still had its first byte.
      if (status >= 200 && status < 300) ttfb.push(headersAt - startedAt);
    });
    client.on("response", (statusCode) => {
      const end = performance.now();
      lastResponseAt = end;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) {
        total.push(end - startedAt);
      } else if (sampleError === undefined) {
        sampleError = `${statusCode} ${errorBody}`;
      }
    });
  };

  const cpuBefore = options.serverPid === undefined ? undefined : cpuTimeMs(options.serverPid);
  const named = Object.entries(options.cpuPids ?? {});
  const namedBefore = named.map(([, pid]) => cpuTimeMs(pid));
  const machineBefore = machineBusyMs();
  const startUs = monotonicUs();
  const ownBefore = ownCpuMs();
  const wallStart = performance.now();
  const result = await autocannon({
    url: options.origin,
    connections: options.connections,
    pipelining: 1,
    duration: options.duration ?? 10,
    amount: options.amount,
    timeout: options.timeoutSeconds ?? 10,
    setupClient,
    // Default request for autocannon's own bookkeeping; every client overrides it.
    requests: shared as autocannon.Request[] | undefined,
  });

  // A run counted in requests ends at its last response. autocannon reports whole seconds, and
  // it answers only at its next one-second sample after the last response, so the wall clock
  // at its answer rounds every run up to a whole second plus a few ms (3,000 requests in 3.6 s
  // read as 745 req/s instead of 833).
  const seconds =
    options.amount === undefined
      ? result.duration
      : ((lastResponseAt > 0 ? lastResponseAt : performance.now()) - wallStart) / 1000;
  const cpuAfter = options.serverPid === undefined ? undefined : cpuTimeMs(options.serverPid);
  const namedAfter = named.map(([, pid]) => cpuTimeMs(pid));
  const machineAfter = machineBusyMs();
  const endUs = monotonicUs();
  if (options.label) {
    const pids = new Set(named.map(([, pid]) => pid));
    if (options.serverPid !== undefined) pids.add(options.serverPid);
    for (const serverPid of pids) {
      measurementWindows.push({ label: options.label, serverPid, startUs, endUs });
    }
  }
  // Children that exited during the run drop out of ownCpuMs; clamp rather than report noise.
  const foreignMs =
    machineBefore === undefined || machineAfter === undefined
      ? undefined
      : Math.max(0, machineAfter - machineBefore - (ownCpuMs() - ownBefore));
  const serverCpuMs =
    cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  const completed = total.length;
  const cpuMsPerRequestByProcess: Record<string, number> = {};
  named.forEach(([name], i) => {
    const before = namedBefore[i];
    const after = namedAfter[i];
    if (before !== undefined && after !== undefined)
      cpuMsPerRequestByProcess[name] = (after - before) / Math.max(1, completed);
  });
  return {
    connections: options.connections,
    durationSeconds: seconds,
    completed,
    reqPerSec: completed / seconds,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    ttfbMs: summarize(ttfb),
    firstBodyByteMs: summarize(firstBody),
    totalMs: summarize(total),
    bodyBytes,
    sampleError,
    serverCpuMs,
    serverCpuMsPerRequest:
      serverCpuMs === undefined ? undefined : serverCpuMs / Math.max(1, completed),
    cpuMsPerRequestByProcess: named.length > 0 ? cpuMsPerRequestByProcess : undefined,
    foreignCpuCores: foreignMs === undefined ? undefined : foreignMs / 1000 / seconds,
  };
}

/** A short unmeasured run first (JIT, connection pools, caches), then the measured one. */
export async function warmThenRun(
  options: LoadOptions,
  warmupSeconds: number,
): Promise<LoadResult> {
  const warmup = { ...options, label: undefined };
  if (options.amount === undefined) {
    await runLoad({ ...warmup, duration: warmupSeconds });
  } else {
    // Request-counted runs are long syntheses: one request per connection warms them enough.
    await runLoad({ ...warmup, amount: options.connections });
  }
  return runLoad(options);
}
