import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  CreateWebhookRequestSchema,
  ListWebhookDeliveriesRequestSchema,
  ListWebhooksRequestSchema,
  UpdateWebhookRequestSchema,
  WebhookService,
} from "../../../gen/railgate/webhook/v1/webhook_service_pb.js";
import { WEBHOOK_REQUEST_RULES } from "../../../services/webhooks/request-rules.js";
import { expectInvalidArgument } from "../../kit/expect.js";

const ID = "0b6e1c1e-8f4e-4f7e-9a54-1c2d3e4f5a6b";
const UPDATABLE = "url, secret, thresholds_pct, credits_below_usd, enabled";

const update = (paths: string[], values: object = {}) =>
  create(UpdateWebhookRequestSchema, { id: ID, ...values, updateMask: { paths } });
const rules = WEBHOOK_REQUEST_RULES;

describe("webhook request rules", () => {
  it("has a rule for every RPC of the service", () => {
    expect(Object.keys(rules).sort()).to.deep.equal(Object.keys(WebhookService.method).sort());
  });

  it("walks an update's mask: empty, unknown paths, values outside it, each value's rule", () => {
    expectInvalidArgument(
      () => rules.updateWebhook(update([], { enabled: false })),
      `Update is empty: send at least one of ${UPDATABLE} (update_mask must name at least 1 field)`,
    );
    expectInvalidArgument(
      () => rules.updateWebhook(update(["colour"])),
      `update_mask names "colour", which is not one of ${UPDATABLE}`,
    );
    expectInvalidArgument(
      () => rules.updateWebhook(update(["url"], { url: "https://a.example", enabled: false })),
      'enabled is set but update_mask does not name it: add "enabled" to update_mask, or leave the field unset',
    );
    expectInvalidArgument(() => rules.updateWebhook(update(["url"])), "url is required");
    expectInvalidArgument(
      () => rules.updateWebhook(update(["secret"])),
      "secret cannot be removed: give a new one to rotate it",
    );
    expectInvalidArgument(
      () => rules.updateWebhook(update(["secret"], { secret: "short" })),
      /^secret must be 16 to 256 printable ASCII characters/,
    );
    expectInvalidArgument(
      () => rules.updateWebhook(update(["thresholds_pct"], { thresholdsPct: { values: [5, 5] } })),
      "thresholds_pct must not repeat a value",
    );
    expectInvalidArgument(
      () => rules.updateWebhook(update(["credits_below_usd"], { creditsBelowUsd: -1 })),
      "credits_below_usd must be a number from 0 to 1000000000 (USD) or null",
    );
    expectInvalidArgument(
      () => rules.updateWebhook(update(["enabled"])),
      "enabled must be true or false",
    );
    // Null thresholds are none and a null credits_below_usd clears it.
    rules.updateWebhook(update(["thresholds_pct", "credits_below_usd"]));
    // The id is the handler's: one that is no UUID is not found, not refused.
    rules.updateWebhook({ ...update(["enabled"], { enabled: true }), id: "x" });
  });

  it("checks a new webhook's values, and a list's page and filter", () => {
    const webhook = (init: object) =>
      create(CreateWebhookRequestSchema, { url: "https://a.example/hook", ...init });
    expectInvalidArgument(
      () => rules.createWebhook(webhook({ url: "ftp://a.example" })),
      'url must use http or https, not "ftp"',
    );
    expectInvalidArgument(
      () => rules.createWebhook(webhook({ url: "https://u:p@a.example" })),
      /^url must not carry credentials/,
    );
    expectInvalidArgument(
      () => rules.createWebhook(webhook({ thresholdsPct: { values: [0] } })),
      "thresholds_pct[0] must be an integer from 1 to 100 (percent of the limit), got 0",
    );
    rules.createWebhook(webhook({}));
    expectInvalidArgument(
      () => rules.listWebhooks(create(ListWebhooksRequestSchema, { workspaceId: "w" })),
      'workspace_id "w" is not a workspace id',
    );
    expectInvalidArgument(
      () => rules.listWebhookDeliveries(create(ListWebhookDeliveriesRequestSchema, { limit: 101 })),
      "limit must be an integer from 1 to 100",
    );
    expectInvalidArgument(
      () =>
        rules.listWebhookDeliveries(create(ListWebhookDeliveriesRequestSchema, { cursor: "%%" })),
      "cursor must be a next_cursor this API answered",
    );
  });
});
