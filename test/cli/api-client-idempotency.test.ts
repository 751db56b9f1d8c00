import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { ApiClient } from "../../apps/cli/http/api-client.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The CLI's HTTP client against a server that answers {} and keeps each request's headers. */
describe("railgate CLI: Idempotency-Key on writes", () => {
  let server: Server;
  let client: ApiClient;
  const seen: IncomingHttpHeaders[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "k");
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function headersOf(req: Parameters<ApiClient["json"]>[0]): Promise<IncomingHttpHeaders> {
    await client.json(req);
    return seen.at(-1) ?? {};
  }

  it("sends a fresh key with each management write, the caller's own when given", async () => {
    const first = await headersOf({ method: "POST", path: "/api/v1/keys", body: { name: "a" } });
    const second = await headersOf({ method: "POST", path: "/api/v1/keys", body: { name: "a" } });
    expect(first["idempotency-key"]).to.match(UUID);
    expect(second["idempotency-key"]).to.match(UUID);
    expect(second["idempotency-key"]).to.not.equal(first["idempotency-key"]);
    for (const method of ["PATCH", "DELETE"]) {
      expect((await headersOf({ method, path: "/api/v1/keys/h" }))["idempotency-key"]).to.match(
        UUID,
      );
    }
    const retried = await headersOf({
      method: "POST",
      path: "/api/v1/keys",
      idempotencyKey: "r-1",
    });
    expect(retried["idempotency-key"]).to.equal("r-1");
  });

  it("sends none with a read or a speech request", async () => {
    expect((await headersOf({ method: "GET", path: "/api/v1/keys" }))["idempotency-key"]).to.equal(
      undefined,
    );
    const speech = await headersOf({ method: "POST", path: "/api/v1/audio/speech", body: {} });
    expect(speech["idempotency-key"]).to.equal(undefined);
  });
});
