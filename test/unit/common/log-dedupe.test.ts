import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { pino } from "pino";
import { ErrorInfoSchema, ErrorReason } from "../../../gen/railgate/common/v1/error_info_pb.js";
import { LogDedupe } from "../../../platform/observability/log-dedupe.js";
import { errorForLog, logFieldsForLog } from "../../../platform/observability/log-fields.js";
import { withReason } from "../../../platform/rpc/errors.js";
import { pollUntil } from "../../kit/poll.js";

interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A pino logger as platform/observability/logger.ts makes it, writing its lines into an array. */
function capture() {
  const lines: Line[] = [];
  const log = pino(
    {
      level: "info",
      serializers: { err: (err: unknown) => errorForLog(err) },
      formatters: { log: logFieldsForLog },
    },
    { write: (line: string) => void lines.push(JSON.parse(line)) },
  );
  return { log, lines };
}

describe("log dedupe", () => {
  it("writes the first line of a kind at once and the repeats as one count when the window ends", async () => {
    const { log, lines } = capture();
    const dedupe = new LogDedupe(50);
    for (let i = 0; i < 500; i++) {
      dedupe.write(log, "warn", "refused", { requestId: `r${i}` }, "provider refused");
    }
    dedupe.write(log, "error", "bug", { requestId: "x" }, "unexpected error");
    expect(lines.map((l) => l.msg)).to.deep.equal(["provider refused", "unexpected error"]);
    expect(lines[0]?.requestId).to.equal("r0");
    await pollUntil(
      async () => lines.length,
      (n) => n >= 3,
    );
    expect(lines).to.have.length(3);
    expect(lines[2]).to.include({
      msg: "provider refused (repeated 499 times)",
      repeated: 499,
      requestId: "r499",
      level: 40,
    });
    // A new window: the next one is written at once again.
    dedupe.write(log, "warn", "refused", {}, "provider refused");
    expect(lines).to.have.length(4);
    dedupe.flush();
    expect(lines).to.have.length(4);
  });

  it("keeps apart lines of other keys, levels or messages", () => {
    const { log, lines } = capture();
    const dedupe = new LogDedupe(60_000);
    dedupe.write(log, "warn", "a", {}, "m");
    dedupe.write(log, "warn", "b", {}, "m");
    dedupe.write(log, "error", "a", {}, "m");
    dedupe.write(log, "warn", "a", {}, "other");
    dedupe.write(log, "warn", "a", {}, "m");
    expect(lines).to.have.length(4);
    dedupe.flush();
    expect(lines.map((l) => l.repeated)).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
      1,
    ]);
  });

  it("counts distinct kinds past its bound together, so no caller can grow it", () => {
    const { log, lines } = capture();
    const dedupe = new LogDedupe(60_000);
    for (let i = 0; i < 1_000; i++) dedupe.write(log, "warn", `k${i}`, {}, "distinct");
    expect(lines.length).to.equal(200);
    dedupe.flush();
    expect(lines.length).to.equal(201);
    expect(lines[200]).to.include({ repeated: 800 });
  });
});

describe("log fields", () => {
  it("logs a ConnectError by code, reason and detail type: no descriptor, no stack", () => {
    const err = withReason(Code.Unavailable, ErrorReason.UPSTREAM_ERROR, "Provider x failed");
    const text = JSON.stringify(errorForLog(err));
    expect(JSON.parse(text)).to.deep.equal({
      type: "ConnectError",
      message: "Provider x failed",
      code: "Unavailable",
      reason: "UPSTREAM_ERROR",
      details: ["railgate.common.v1.ErrorInfo"],
    });
    // What pino's own serializer keeps of the same error: the detail's descriptor, whole.
    const std = pino.stdSerializers.err(err) as unknown as {
      details: { desc: { file: { name: string } } }[];
    };
    expect(std.details[0]?.desc.file.name).to.equal("railgate/common/v1/error_info");
  });

  it("keeps the stack of a fault, and of a bug, but not of a cancellation", () => {
    const internal = errorForLog(new ConnectError("boom", Code.Internal)) as Record<
      string,
      unknown
    >;
    expect(internal.stack).to.be.a("string");
    const bug = errorForLog(new TypeError("x is undefined")) as Record<string, unknown>;
    expect(bug).to.include({ type: "TypeError", message: "x is undefined" });
    expect(bug.stack).to.be.a("string");
    const abort = new AbortController();
    abort.abort();
    expect(errorForLog(abort.signal.reason)).to.deep.equal({
      type: "AbortError",
      message: "This operation was aborted",
      code: 20,
    });
  });

  it("replaces a protobuf message or descriptor in any field by its name", () => {
    const { log, lines } = capture();
    const info = create(ErrorInfoSchema, { reason: ErrorReason.UPSTREAM_ERROR });
    log.warn({ info, schema: ErrorInfoSchema, plain: { a: 1 }, n: 3 }, "fields");
    expect(lines[0]).to.deep.include({
      info: { protobuf: "railgate.common.v1.ErrorInfo" },
      schema: { protobuf: "message descriptor railgate.common.v1.ErrorInfo" },
      plain: { a: 1 },
      n: 3,
    });
  });
});
