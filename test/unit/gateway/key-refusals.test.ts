import { expect } from "chai";
import { bearerSecret, keyRefusals } from "../../../domain/auth/key-refusals.js";
import { errorReply } from "../../../gateway/http-error.js";
import { ErrorReason } from "../../../gen/railgate/common/v1/error_info_pb.js";
import { errorInfoOf } from "../../../platform/rpc/errors.js";

describe("key refusals: one text and one reason for HTTP and gRPC", () => {
  it("reads the secret of Bearer <key> only", () => {
    expect(bearerSecret("Bearer abc")).to.equal("abc");
    expect(bearerSecret("bearer\tabc ")).to.equal("abc");
    expect(bearerSecret("Basic abc")).to.equal(undefined);
    expect(bearerSecret("Bearer a b")).to.equal(undefined);
  });

  it("gives every refusal a reason, and the HTTP status from the one table", () => {
    const cases = [
      [keyRefusals.missing("http"), ErrorReason.API_KEY_MISSING, 401],
      [keyRefusals.malformed("http"), ErrorReason.API_KEY_MALFORMED, 401],
      [keyRefusals.invalid(), ErrorReason.API_KEY_INVALID, 401],
      [keyRefusals.disabled(), ErrorReason.API_KEY_DISABLED, 401],
      [keyRefusals.managementRequired(), ErrorReason.MANAGEMENT_KEY_REQUIRED, 403],
      [keyRefusals.standardRequired(), ErrorReason.STANDARD_KEY_REQUIRED, 403],
    ] as const;
    for (const [err, reason, status] of cases) {
      expect(errorInfoOf(err)?.reason, err.rawMessage).to.equal(reason);
      expect(errorReply(err)).to.deep.include({ status, message: err.rawMessage });
    }
  });

  it("names the credential's carrier as each transport spells it", () => {
    expect(keyRefusals.missing("http").rawMessage).to.equal(
      "Missing API key: send Authorization: Bearer <key>",
    );
    expect(keyRefusals.missing("grpc").rawMessage).to.equal(
      "Missing API key: send authorization: Bearer <key>",
    );
  });
});
