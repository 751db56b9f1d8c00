import { Code, ConnectError } from "@connectrpc/connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { expect } from "chai";
import { errorStatusOf, STATUS_BY_CODE, STATUS_BY_REASON } from "../../../gateway/error-status.js";
import { errorReply } from "../../../gateway/http-error.js";
import { ErrorReason, ErrorReasonSchema } from "../../../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../../../platform/rpc/errors.js";

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
      [Code.FailedPrecondition, ErrorReason.MEMBER_HAS_ENABLED_KEYS, 409],
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

  it("keeps the status the code gave for every refusal that now names its reason", () => {
    // The code each reason is raised with, and the status the spec gives that refusal.
    const cases: [Code, ErrorReason, number][] = [
      [Code.Unauthenticated, ErrorReason.API_KEY_MISSING, 401],
      [Code.Unauthenticated, ErrorReason.API_KEY_MALFORMED, 401],
      [Code.Unauthenticated, ErrorReason.API_KEY_INVALID, 401],
      [Code.Unauthenticated, ErrorReason.API_KEY_DISABLED, 401],
      [Code.Unauthenticated, ErrorReason.API_KEY_EXPIRED, 401],
      [Code.PermissionDenied, ErrorReason.MANAGEMENT_KEY_REQUIRED, 403],
      [Code.PermissionDenied, ErrorReason.STANDARD_KEY_REQUIRED, 403],
      [Code.Unauthenticated, ErrorReason.GATEWAY_TOKEN_INVALID, 401],
      [Code.PermissionDenied, ErrorReason.GATEWAY_CREDENTIAL_REQUIRED, 403],
      [Code.PermissionDenied, ErrorReason.REGION_NOT_ALLOWED, 403],
      [Code.PermissionDenied, ErrorReason.MODEL_NOT_ALLOWED, 403],
      [Code.PermissionDenied, ErrorReason.MODEL_IGNORED, 403],
      [Code.PermissionDenied, ErrorReason.CONTENT_BLOCKED, 403],
      [Code.PermissionDenied, ErrorReason.PROMPT_INJECTION_BLOCKED, 403],
      [Code.NotFound, ErrorReason.NO_ALLOWED_ENDPOINT, 404],
      [Code.NotFound, ErrorReason.NO_CAPABLE_ENDPOINT, 404],
      [Code.NotFound, ErrorReason.WORKSPACE_NOT_FOUND, 404],
      [Code.NotFound, ErrorReason.KEY_NOT_FOUND, 404],
      [Code.NotFound, ErrorReason.GUARDRAIL_NOT_FOUND, 404],
      [Code.NotFound, ErrorReason.MODEL_NOT_FOUND, 404],
      [Code.NotFound, ErrorReason.GENERATION_NOT_FOUND, 404],
      [Code.NotFound, ErrorReason.WEBHOOK_NOT_FOUND, 404],
      [Code.NotFound, ErrorReason.POLICY_NOT_FOUND, 404],
      [Code.Aborted, ErrorReason.UPDATE_CONFLICT, 409],
      [Code.Aborted, ErrorReason.ID_COLLISION, 409],
      [Code.AlreadyExists, ErrorReason.ID_COLLISION, 409],
      [Code.AlreadyExists, ErrorReason.SLUG_TAKEN, 409],
      [Code.NotFound, ErrorReason.GUARDRAIL_VERSION_NOT_FOUND, 404],
      [Code.Aborted, ErrorReason.CHECKS_FAILED, 409],
      [Code.Aborted, ErrorReason.SHADOW_EXISTS, 409],
      [Code.NotFound, ErrorReason.SHADOW_NOT_FOUND, 404],
    ];
    for (const [code, reason, status] of cases) {
      const err = withReason(code, reason, "refused");
      expect(STATUS_BY_CODE[code], `${Code[code]} without a reason`).to.equal(status);
      expect(errorStatusOf(err).status, ErrorReason[reason]).to.equal(status);
      expect(errorStatusOf(overGrpc(err)).status, `${ErrorReason[reason]} over gRPC`).to.equal(
        status,
      );
    }
  });

  it("is tested for every reason of the proto, by one of the two case lists above", () => {
    // The reasons those two tests name; a reason added to the proto must join one of them.
    const tested = new Set([
      ErrorReason.INSUFFICIENT_CREDITS,
      ErrorReason.PAYLOAD_TOO_LARGE,
      ErrorReason.RATE_LIMITED,
      ErrorReason.KEY_LIMIT_EXCEEDED,
      ErrorReason.BUDGET_EXCEEDED,
      ErrorReason.COUNT_LIMIT_REACHED,
      ErrorReason.WORKSPACE_HAS_ENABLED_KEYS,
      ErrorReason.MEMBER_HAS_ENABLED_KEYS,
      ErrorReason.STORE_UNAVAILABLE,
      ErrorReason.UPSTREAM_ERROR,
      ErrorReason.UPSTREAM_UNREACHABLE,
      ErrorReason.UPSTREAM_UNAVAILABLE,
      ErrorReason.UPSTREAM_TIMEOUT,
      ErrorReason.UPSTREAM_OVERLOADED,
      ErrorReason.API_KEY_MISSING,
      ErrorReason.API_KEY_MALFORMED,
      ErrorReason.API_KEY_INVALID,
      ErrorReason.API_KEY_DISABLED,
      ErrorReason.API_KEY_EXPIRED,
      ErrorReason.MANAGEMENT_KEY_REQUIRED,
      ErrorReason.STANDARD_KEY_REQUIRED,
      ErrorReason.GATEWAY_TOKEN_INVALID,
      ErrorReason.GATEWAY_CREDENTIAL_REQUIRED,
      ErrorReason.REGION_NOT_ALLOWED,
      ErrorReason.MODEL_NOT_ALLOWED,
      ErrorReason.MODEL_IGNORED,
      ErrorReason.CONTENT_BLOCKED,
      ErrorReason.PROMPT_INJECTION_BLOCKED,
      ErrorReason.NO_ALLOWED_ENDPOINT,
      ErrorReason.NO_CAPABLE_ENDPOINT,
      ErrorReason.WORKSPACE_NOT_FOUND,
      ErrorReason.KEY_NOT_FOUND,
      ErrorReason.GUARDRAIL_NOT_FOUND,
      ErrorReason.MODEL_NOT_FOUND,
      ErrorReason.GENERATION_NOT_FOUND,
      ErrorReason.WEBHOOK_NOT_FOUND,
      ErrorReason.POLICY_NOT_FOUND,
      ErrorReason.UPDATE_CONFLICT,
      ErrorReason.ID_COLLISION,
      ErrorReason.SLUG_TAKEN,
      ErrorReason.GUARDRAIL_VERSION_NOT_FOUND,
      ErrorReason.CHECKS_FAILED,
      ErrorReason.SHADOW_EXISTS,
      ErrorReason.SHADOW_NOT_FOUND,
    ]);
    const untested = ErrorReasonSchema.values
      .filter((v) => v.number !== ErrorReason.UNSPECIFIED && !tested.has(v.number))
      .map((v) => v.name);
    expect(untested).to.deep.equal([]);
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

  it("answers a 5xx no service reported on purpose (the gRPC hop's own words) with a fixed message", () => {
    const unreachable = new ConnectError(
      "No connection established. Last error: connect ECONNREFUSED 10.0.3.7:50052",
      Code.Unavailable,
    );
    expect(errorReply(unreachable)).to.deep.include({
      status: 503,
      message: "Service unavailable: an internal service is not answering; retry shortly",
    });
    const late = new ConnectError(
      "Deadline exceeded after 10.001s,LB pick: 0.000s,remote_addr=10.0.3.7:50052",
      Code.DeadlineExceeded,
    );
    expect(errorReply(late)).to.deep.include({
      status: 524,
      message: "Request timed out: an internal service did not answer in time",
    });
    expect(errorReply(overGrpc(late)).message).to.not.include("10.0.3.7");
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
