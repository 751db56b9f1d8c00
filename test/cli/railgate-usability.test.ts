import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { expectUsageError, runBin } from "./bin.js";

interface Seen {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * The CLI against a stand-in gateway that records what it is sent and answers as the API does:
 * enough to see which body the CLI builds and how it prints the answer.
 */
describe("railgate CLI: suggestions, help, its own settings, speak's format, a key's secret", function () {
  this.timeout(120_000);
  let server: Server;
  let url: string;
  let dir: string;
  const seen: Seen[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "railgate-cli-"));
    server = createServer(async (req, res) => {
      const body = await bodyOf(req);
      const path = new URL(req.url ?? "/", "http://x").pathname;
      seen.push({ method: req.method ?? "", path, body });
      if (path === "/api/v1/audio/speech") {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(Buffer.alloc(16));
        return;
      }
      res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
      if (path === "/api/v1/keys" && req.method === "POST") {
        res.end(JSON.stringify({ data: { hash: "h1", name: body.name }, key: "sk-rg-secret" }));
        return;
      }
      res.end(JSON.stringify({ data: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const railgate = (args: string[], env: Record<string, string> = {}) =>
    runBin(args, { RAILGATE_URL: url, RAILGATE_KEY: "k", ...env });

  it("suggests the nearest command or flag for an unknown one (exit 2)", async () => {
    expectUsageError(await railgate(["kyes", "list"]), 'did you mean "keys list"?');
    expectUsageError(await railgate(["keys", "lst"]), 'did you mean "keys list"?');
    expectUsageError(await railgate(["keys", "list", "--limt", "3"]), "did you mean --limit?");
    expectUsageError(await railgate(["speak", "hi", "--voise", "x"]), "did you mean --voice?");
  });

  it("refuses --url notaurl with exit 2 and the message RAILGATE_URL=notaurl gets", async () => {
    const flag = await railgate(["keys", "list", "--url", "notaurl"]);
    const variable = await railgate(["keys", "list"], { RAILGATE_URL: "notaurl" });
    expectUsageError(flag, "RAILGATE_URL must be an http(s):// URL");
    expect(flag.stderr).to.equal(variable.stderr);
    expect(variable.code).to.equal(2);
  });

  it("reads only its own settings: a server's in the shell do not fail a call", async () => {
    const run = await railgate(["keys", "list"], { LOG_LEVEL: "verbose", MAX_BODY_BYTES: "1MB" });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.equal("");
    const renamed = await railgate(["keys", "list"], {
      RAILGATE_LOG_LEVEL: "verbose",
      RAILGATE_MAX_BODY_BYTES: "1MB",
      RAILGATE_GATEWAY_PORT: "http",
      DATABASE_URL: "mysql://nope",
    });
    expect(renamed.code, renamed.stderr).to.equal(0);
    expect(renamed.stderr).to.equal("");
  });

  it("reads its own settings under their deprecated names, and says which name replaces each", async () => {
    const run = await railgate(["keys", "list"], { GUARDRAIL_GRPC_URL: "http://127.0.0.1:1" });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.equal(
      "railgate: environment variable GUARDRAIL_GRPC_URL is deprecated: rename it RAILGATE_GUARDRAIL_GRPC_URL\n",
    );
    const bad = await railgate(["keys", "list", "--grpc"], { GUARDRAIL_GRPC_PORT: "http" });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain(
      'GUARDRAIL_GRPC_PORT (now RAILGATE_GUARDRAIL_GRPC_PORT) must be a port number 0..65535, got "http"',
    );
  });

  it("has a help command: the same usage as --help, globals once at the top only", async () => {
    const top = await railgate(["help"]);
    expect(top.code).to.equal(0);
    expect(top.stdout).to.equal((await railgate(["--help"])).stdout);
    expect(top.stdout.match(/^global options:$/gm)).to.have.length(1);
    const command = await railgate(["help", "keys", "create"]);
    expect(command.code).to.equal(0);
    expect(command.stdout).to.equal((await railgate(["keys", "create", "--help"])).stdout);
    expect(command.stdout).to.not.contain("global options:");
    expect(command.stdout).to.contain("railgate help");
    expect(command.stdout).to.match(/\nexamples:\n {2}railgate keys create --name /);
    const group = await railgate(["help", "keys"]);
    expect(group.code).to.equal(0);
    expect(group.stdout).to.not.contain("global options:");
  });

  it("says activity covers completed UTC days and points to usage for today", async () => {
    const run = await railgate(["activity", "--help"]);
    expect(run.stdout).to.contain("completed UTC day");
    expect(run.stdout).to.contain("railgate usage");
  });

  it("speak takes the format from --out's extension unless --format says otherwise", async () => {
    const speak = async (out: string, ...more: string[]) => {
      seen.length = 0;
      const args = ["speak", "Hi.", "--model", "a/b", "--voice", "v", "--out", join(dir, out)];
      const run = await railgate([...args, ...more]);
      expect(run.code, run.stderr).to.equal(0);
      return seen.find((s) => s.path === "/api/v1/audio/speech")?.body;
    };
    expect((await speak("a.mp3"))?.response_format).to.equal("mp3");
    expect((await speak("a.WAV"))?.response_format).to.equal("wav");
    expect((await speak("a.flac"))?.response_format).to.equal("flac");
    expect((await speak("a.mp3", "--format", "opus"))?.response_format).to.equal("opus");
    // No format a name says: the server's default.
    expect(await speak("a.audio")).to.not.have.property("response_format");
  });

  it("says a new key's secret is shown once (the table; --json stays the API's JSON)", async () => {
    const table = await railgate(["keys", "create", "--name", "app"]);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.contain("sk-rg-secret");
    expect(table.stdout).to.match(/secret .*shown this once/);
    const json = await railgate(["keys", "create", "--name", "app", "--json"]);
    expect(JSON.parse(json.stdout)).to.deep.equal({
      data: { hash: "h1", name: "app" },
      key: "sk-rg-secret",
    });
  });
});
