import { Code, ConnectError } from "@connectrpc/connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { expect } from "chai";
import { errorStatusOf, STATUS_BY_REASON } from "../../../gateway/error-status.js";
import { errorReply } from "../../../gateway/http-error.js";
import { ErrorReason, ErrorReasonSchema } from "../../../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../../../platform/errors.js";

/** The statuses the spec's error table lists (service-spec.md, "Errors"). */
const SPEC_STATUSES = new Set([400, 401, 402, 403, 404, 409, 413, 429, 500, 502, 503, 524, 529]);

/** The error as the gateway's grpc-js transport reads it back from the trailers. */
function overGrpc(err: ConnectError): ConnectError {
  const back = findTrailerError(setTrailerStatus(new Headers(), err));
  if (!back) throw new Error("the trailers carry no error");
  return back;
}

describe("gateway: error reason -> HTTP status table", () => {
  it("gives every reason of the proto a status from the spec's list", () => {
    for (const value of ErrorReasonSchema.values) {
      if (value.number === ErrorReason.UNSPECIFIED) continue;
      const status = (STATUS_BY_REASON as Record<number, number>)[value.number];
      expect(SPEC_STATUSES.has(status ?? 0), `${value.name} -> ${status}`).to.equal(true);
    }
  });

  it("answers the statuses no gRPC code expresses by the reason, whatever the code", () => {
    const cases: [Code, ErrorReason, number][] = [
      [Code.FailedPrecondition, ErrorReason.INSUFFICIENT_CREDITS, 402],
      [Code.InvalidArgument, ErrorReason.PAYLOAD_TOO_LARGE, 413],
      [Code.ResourceExhausted, ErrorReason.RATE_LIMITED, 429],
      [Code.PermissionDenied, ErrorReason.KEY_LIMIT_EXCEEDED, 403],
      [Code.PermissionDenied, ErrorReason.BUDGET_EXCEEDED, 403],
      [Code.ResourceExhausted, ErrorReason.COUNT_LIMIT_REACHED, 409],
      [Code.FailedPrecondition, ErrorReason.WORKSPACE_HAS_ENABLED_KEYS, 409],
      [Code.Unavailable, ErrorReason.STORE_UNAVAILABLE, 503],
      [Code.Unavailable, ErrorReason.UPSTREAM_ERROR, 502],
      [Code.Unavailable, ErrorReason.UPSTREAM_UNREACHABLE, 502],
      [Code.Unavailable, ErrorReason.UPSTREAM_UNAVAILABLE, 503],
      [Code.DeadlineExceeded, ErrorReason.UPSTREAM_TIMEOUT, 524],
      [Code.ResourceExhausted, ErrorReason.UPSTREAM_OVERLOADED, 529],
    ];
    for (const [code, reason, status] of cases) {
      const err = withReason(code, reason, "refused");
      expect(errorStatusOf(err).status, ErrorReason[reason]).to.equal(status);
      expect(errorStatusOf(overGrpc(err)).status, `${ErrorReason[reason]} over gRPC`).to.equal(
        status,
      );
    }
  });

  it("falls back to the gRPC code without a reason, or with one this build does not know", () => {
    expect(errorStatusOf(new ConnectError("x", Code.Aborted)).status).to.equal(409);
    expect(errorStatusOf(new ConnectError("x", Code.FailedPrecondition)).status).to.equal(400);
    expect(errorStatusOf(new ConnectError("x", Code.Unauthenticated)).status).to.equal(401);
    expect(errorStatusOf(new ConnectError("x", Code.Internal)).status).to.equal(500);
    const newer = withReason(Code.FailedPrecondition, 999 as ErrorReason, "from a newer service");
    expect(errorStatusOf(newer)).to.deep.equal({ status: 400 });
    const unspecified = withReason(Code.NotFound, ErrorReason.UNSPECIFIED, "x");
    expect(errorStatusOf(unspecified)).to.deep.equal({ status: 404 });
  });

  it("carries Retry-After only when the service said how long to wait, across gRPC trailers too", () => {
    const limited = withReason(Code.ResourceExhausted, ErrorReason.RATE_LIMITED, "slow down", 7);
    expect(errorStatusOf(limited)).to.deep.equal({ status: 429, retryAfterSeconds: 7 });
    expect(errorStatusOf(overGrpc(limited))).to.deep.equal({ status: 429, retryAfterSeconds: 7 });
    const credits = withReason(Code.FailedPrecondition, ErrorReason.INSUFFICIENT_CREDITS, "no");
    expect(errorStatusOf(credits)).to.deep.equal({ status: 402 });
  });

  it("renders the reply: status, Retry-After header, and the service's message", () => {
    const outage = withReason(Code.Unavailable, ErrorReason.STORE_UNAVAILABLE, "store down", 2);
    expect(errorReply(outage)).to.deep.equal({
      status: 503,
      message: "store down",
      headers: { "retry-after": "2" },
    });
    const overloaded = withReason(
      Code.ResourceExhausted,
      ErrorReason.UPSTREAM_OVERLOADED,
      "Provider p is overloaded",
    );
    expect(errorReply(overloaded)).to.deep.include({
      status: 529,
      message: "Provider p is overloaded",
    });
  });

  it("takes a ResourceExhausted without a reason for Connect's own size limit (413), not a rate limit", () => {
    const reply = errorReply(
      new ConnectError(
        "message size 9000 is larger than configured readMaxBytes 10",
        Code.ResourceExhausted,
      ),
    );
    expect(reply.status).to.equal(413);
    expect(reply.headers).to.deep.equal({});
  });
});
