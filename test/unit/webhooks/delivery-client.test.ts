import { expect } from "chai";
import { DeliveryClient } from "../../../services/webhooks/delivery-client.js";
import { freePort } from "../../kit/free-port.js";
import { WebhookReceiver } from "../../kit/webhook-receiver.js";

const SECRET = "whsec_client_test_0123456789";

/** A real receiver for every case: what the client sends and how it reads each answer. */
describe("webhooks: delivery client against a real HTTP receiver", () => {
  const receiver = new WebhookReceiver();
  const other = new WebhookReceiver();
  const client = new DeliveryClient(1_000);
  let n = 0;

  before(async () => {
    receiver.secret = SECRET;
    await receiver.start();
    await other.start();
  });
  after(async () => {
    await client.close();
    await receiver.close();
    await other.close();
  });
  beforeEach(() => {
    receiver.behaviour = { kind: "status", status: 204 };
  });

  function send(url = receiver.url) {
    n += 1;
    return client.send({
      url: `${url}?n=${n}`,
      secret: SECRET,
      body: JSON.stringify({ id: `evt_${n}`, type: "webhook.test" }),
      eventId: `evt_${n}`,
      eventType: "webhook.test",
      deliveryId: `d-${n}`,
      requestId: `req-${n}`,
      timestamp: Math.floor(Date.now() / 1000),
    });
  }

  it("POSTs the signed JSON with its ids; a 2xx is delivered", async () => {
    expect(await send()).to.deep.equal({ ok: true, statusCode: 204 });
    const got = receiver.received.at(-1);
    expect(got?.verified).to.equal(true);
    expect(got?.path).to.equal(`/hooks/railgate?n=${n}`);
    expect(got?.headers["content-type"]).to.equal("application/json");
    expect(got?.headers["railgate-event-id"]).to.equal(`evt_${n}`);
    expect(got?.headers["railgate-event-type"]).to.equal("webhook.test");
    expect(got?.headers["railgate-delivery-id"]).to.equal(`d-${n}`);
    expect(got?.headers["x-request-id"]).to.equal(`req-${n}`);
    expect(got?.event).to.deep.equal({ id: `evt_${n}`, type: "webhook.test" });
  });

  it("a 500 is a failed attempt with its status", async () => {
    receiver.behaviour = { kind: "status", status: 500 };
    expect(await send()).to.deep.equal({ ok: false, statusCode: 500, error: "http_status" });
  });

  it("never follows a redirect, to another host or at all", async () => {
    const before = other.received.length;
    receiver.behaviour = { kind: "status", status: 307, headers: { location: other.url } };
    expect(await send()).to.deep.equal({ ok: false, statusCode: 307, error: "redirect" });
    expect(other.received.length).to.equal(before);
  });

  it("a closed port is connection_refused; a dropped connection connection_reset", async () => {
    const closed = await freePort();
    expect(await send(`http://127.0.0.1:${closed}/x`)).to.deep.equal({
      ok: false,
      statusCode: null,
      error: "connection_refused",
    });
    receiver.behaviour = { kind: "close" };
    expect(await send()).to.deep.include({
      ok: false,
      statusCode: null,
      error: "connection_reset",
    });
  });

  it("a receiver that never answers is a timeout (the attempt's deadline)", async () => {
    receiver.behaviour = { kind: "hang" };
    expect(await send()).to.deep.equal({ ok: false, statusCode: null, error: "timeout" });
  });
});
