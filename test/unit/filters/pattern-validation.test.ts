import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { FilterAction, GuardrailSchema } from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { patternProblem } from "../../../governance/filters/pattern.js";
import { validateGuardrail } from "../../../services/guardrail/validation.js";

const withPatterns = (...patterns: string[]) =>
  create(GuardrailSchema, {
    id: "i",
    workspaceId: "w",
    name: "ok",
    contentFilters: {
      values: patterns.map((pattern) => ({ pattern, action: FilterAction.REDACT, label: "" })),
    },
  });

describe("custom filter patterns on write", () => {
  it("refuses a pattern that can match the empty string, naming the field and the rule", () => {
    for (const pattern of ["(.*x)?", "a*", "x|", "\\b", "(?m)^"]) {
      try {
        validateGuardrail(withPatterns("fine", pattern));
        expect.fail(`${pattern} was accepted`);
      } catch (err) {
        expect(err, pattern).to.be.instanceOf(ConnectError);
        expect((err as ConnectError).rawMessage, pattern).to.match(
          /^content_filters\[1\]\.pattern is not a usable regular expression: it can match the empty string/,
        );
      }
    }
  });

  it("accepts patterns that always consume a character, however they backtrack", () => {
    for (const pattern of ["x.*y|x", "(a|aa)*b", ".*.*.*=", "\\bPRJ-\\d{4}\\b", "(?i)^top secret$"])
      expect(patternProblem(pattern), pattern).to.equal(undefined);
    validateGuardrail(withPatterns("x.*y|x", "(a|aa)*b", ".*.*.*="));
  });

  it("refuses nested quantifiers and repeated duplicate alternatives, naming the field and the group", () => {
    for (const [pattern, rule] of [
      ["(a+)+", /nested quantifiers in "\(a\+\)\+"/],
      ["x(?:\\w+\\s?)*y", /nested quantifiers in "\(\?:\\\\w\+\\\\s\?\)\*"/],
      ["((ab)+c){2,}", /nested quantifiers/],
      ["(?P<n>[a-z]*\\d)+", /nested quantifiers/],
      ["(a|a)*", /duplicate alternatives in "\(a\|a\)\*"/],
      ["(x|y|x)+z", /duplicate alternatives/],
    ] as const) {
      try {
        validateGuardrail(withPatterns("fine", pattern));
        expect.fail(`${pattern} was accepted`);
      } catch (err) {
        expect(err, pattern).to.be.instanceOf(ConnectError);
        const message = (err as ConnectError).rawMessage;
        expect(message, pattern).to.match(
          /^content_filters\[1\]\.pattern is not a usable regular expression: /,
        );
        expect(message, pattern).to.match(rule);
      }
    }
  });

  it("accepts fixed counts, plain repeated groups and quantifiers inside classes or quotes", () => {
    for (const pattern of [
      "(\\d{3}-){2}\\d{4}",
      "(ab)+",
      "(a|b)*c",
      "(a+){3}",
      "([+*]x)+",
      "(\\Q+*\\E)+",
      "(a\\+)+",
      "\\(a+\\)+",
      "(a?b)+",
      "PRJ-\\d{4,6}",
    ])
      expect(patternProblem(pattern), pattern).to.equal(undefined);
  });
});
