import { expect } from "chai";
import {
  FILTER_ACTIONS,
  KEY_LIMIT_RESETS,
  keyLimitWindow,
  RESET_INTERVALS,
  SCAN_SCOPES,
} from "../../../domain/enums.js";
import { WINDOW_INTERVALS } from "../../../domain/windows.js";
import { KeyLimitReset } from "../../../gen/railgate/account/v1/account_pb.js";
import {
  FilterAction,
  ResetInterval,
  ScanScope,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";

describe("unit: API names of the proto enums", () => {
  it("names each value by its proto name, lower case, without the prefix, in proto order", () => {
    expect(RESET_INTERVALS.names).to.deep.equal(["daily", "weekly", "monthly"]);
    expect(KEY_LIMIT_RESETS.names).to.deep.equal(["daily", "weekly", "monthly"]);
    expect(FILTER_ACTIONS.names).to.deep.equal(["block", "redact", "flag"]);
    expect(SCAN_SCOPES.names).to.deep.equal(["user_only", "all_messages"]);
  });

  it("maps names to values and back; UNSPECIFIED and unknown numbers have no name", () => {
    expect(RESET_INTERVALS.value("weekly")).to.equal(ResetInterval.WEEKLY);
    expect(RESET_INTERVALS.name(ResetInterval.MONTHLY)).to.equal("monthly");
    expect(RESET_INTERVALS.name(ResetInterval.UNSPECIFIED)).to.equal(undefined);
    expect(FILTER_ACTIONS.value("redact")).to.equal(FilterAction.REDACT);
    expect(FILTER_ACTIONS.name(9 as FilterAction)).to.equal(undefined);
    expect(SCAN_SCOPES.name(ScanScope.USER_ONLY)).to.equal("user_only");
    expect(KEY_LIMIT_RESETS.name(undefined)).to.equal(undefined);
  });

  it("tells names from other strings", () => {
    expect(FILTER_ACTIONS.is("block")).to.equal(true);
    expect(FILTER_ACTIONS.is("BLOCK")).to.equal(false);
    expect(FILTER_ACTIONS.is("unspecified")).to.equal(false);
    expect(RESET_INTERVALS.is(1)).to.equal(false);
  });

  it("quotes the names as error messages list them", () => {
    expect(RESET_INTERVALS.quoted).to.equal('"daily", "weekly", "monthly"');
  });

  it("counts spend in the windows reset_interval names, which key limits share", () => {
    expect(WINDOW_INTERVALS).to.deep.equal(RESET_INTERVALS.names);
    expect(keyLimitWindow(KeyLimitReset.WEEKLY)).to.equal("weekly");
    expect(keyLimitWindow(KeyLimitReset.UNSPECIFIED)).to.equal(undefined);
  });
});
