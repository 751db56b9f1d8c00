import { createHmac } from "node:crypto";
import { expect } from "chai";
import {
  signatureHeader,
  verifyWebhookSignature,
  webhookSignature,
} from "../../../services/webhooks/webhook-signature.js";

const SECRET = "whsec_test_0123456789abcdef";
const BODY = '{"id":"evt_1","type":"webhook.test"}';
const T = 1_790_000_000;

describe("webhooks: Railgate-Signature", () => {
  it("is HMAC-SHA256 of `<t>.<raw body>` in hex, as `t=<t>,v1=<hex>`", () => {
    const expected = createHmac("sha256", SECRET).update(`${T}.${BODY}`).digest("hex");
    expect(webhookSignature(SECRET, T, BODY)).to.equal(expected);
    expect(signatureHeader(SECRET, T, BODY)).to.equal(`t=${T},v1=${expected}`);
  });

  it("verifies a fresh signature over the raw bytes (string or Buffer)", () => {
    const header = signatureHeader(SECRET, T, BODY);
    for (const body of [BODY, Buffer.from(BODY)]) {
      expect(
        verifyWebhookSignature({ secret: SECRET, header, body, nowSeconds: T + 10 }),
      ).to.deep.equal({
        ok: true,
        timestamp: T,
      });
    }
  });

  it("refuses another secret, a changed body and a changed timestamp", () => {
    const header = signatureHeader(SECRET, T, BODY);
    const check = (over: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
      verifyWebhookSignature({ secret: SECRET, header, body: BODY, nowSeconds: T, ...over });
    expect(check({ secret: `${SECRET}x` })).to.deep.equal({ ok: false, reason: "mismatch" });
    expect(check({ body: BODY.replace("test", "tset") })).to.deep.equal({
      ok: false,
      reason: "mismatch",
    });
    // A replayer moving t forward breaks the signature, since t is signed with the body.
    const moved = header.replace(`t=${T}`, `t=${T + 1000}`);
    expect(check({ header: moved, nowSeconds: T + 1000 })).to.deep.equal({
      ok: false,
      reason: "mismatch",
    });
  });

  it("refuses a timestamp older (or newer) than the tolerance: a replay", () => {
    const header = signatureHeader(SECRET, T, BODY);
    const at = (nowSeconds: number, toleranceSeconds?: number) =>
      verifyWebhookSignature({ secret: SECRET, header, body: BODY, nowSeconds, toleranceSeconds })
        .ok;
    expect(at(T + 300)).to.equal(true);
    expect(at(T + 301)).to.equal(false);
    expect(at(T - 301)).to.equal(false);
    expect(at(T + 60, 30)).to.equal(false);
    expect(
      verifyWebhookSignature({ secret: SECRET, header, body: BODY, nowSeconds: T + 301 }),
    ).to.deep.equal({ ok: false, reason: "stale" });
  });

  it("accepts any one of several v1 entries (a receiver rotating its secret)", () => {
    const header = `t=${T},v1=${webhookSignature("old-secret-0123456789", T, BODY)},v1=${webhookSignature(SECRET, T, BODY)}`;
    expect(
      verifyWebhookSignature({ secret: SECRET, header, body: BODY, nowSeconds: T }).ok,
    ).to.equal(true);
  });

  it("refuses malformed headers without throwing", () => {
    for (const header of [
      undefined,
      null,
      "",
      "garbage",
      `t=${T}`,
      "v1=abc",
      `t=abc,v1=${"0".repeat(64)}`,
      `t=${T},v1=${"Z".repeat(64)}`,
      `t=${T},v1=${"0".repeat(63)}`,
      "x".repeat(2000),
    ]) {
      expect(
        verifyWebhookSignature({ secret: SECRET, header, body: BODY, nowSeconds: T }),
        String(header),
      ).to.deep.equal({ ok: false, reason: "malformed" });
    }
  });
});
