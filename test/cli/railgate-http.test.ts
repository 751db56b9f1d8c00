import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { HTTP_COMMANDS } from "../../apps/cli/http/commands.js";
import { freePort } from "../kit/free-port.js";
import { pollUntil } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { type StandardKey, useSpeechSystem } from "../kit/speech-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";
import { expectUsageError, PACKAGE, type Run, runBin } from "./bin.js";

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON as the CLI prints it
type Json = any;

/**
 * The built CLI against a running system over its public HTTP API (RAILGATE_URL): every
 * command group end to end, its --help, --version, the API's refusals word for word.
 */
describe("railgate CLI over the HTTP API (the built bin against a running gateway)", function () {
  this.timeout(120_000);
  const h = useSpeechSystem({ embeddedEngine: "off" });
  let dir: string;
  let speaker: StandardKey;

  const railgate = (args: string[], key = MANAGEMENT_KEY, env: Record<string, string> = {}) =>
    runBin(args, { RAILGATE_URL: h.baseUrl, RAILGATE_KEY: key, ...env });

  async function json(args: string[], key?: string): Promise<Json> {
    const run = await railgate([...args, "--json"], key);
    expect(run.stderr, run.stderr).to.equal("");
    expect(run.code).to.equal(0);
    return JSON.parse(run.stdout);
  }

  /** A table's header line and body lines. */
  async function table(args: string[], key?: string): Promise<{ header: string; lines: string[] }> {
    const run = await railgate(args, key);
    expect(run.code, run.stderr).to.equal(0);
    const [header = "", ...lines] = run.stdout.trimEnd().split("\n");
    return { header, lines };
  }

  function expectRefusal(run: Run, status: string, message: string): void {
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stdout).to.equal("");
    expect(run.stderr).to.equal(`railgate: [${status}] ${message}\n`);
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "railgate-cli-http-"));
    speaker = await h.createKey();
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("prints the package's version, and usage for each group and command (exit 0)", async function () {
    // 55 processes of the built bin (~0.5 s of start-up each): 26 s alone on 2 cores, 105 s
    // in a test:all lane beside the other lanes, and once past the suite's 120 s.
    this.timeout(360_000);
    const version = await railgate(["--version"]);
    expect(version.code).to.equal(0);
    expect(version.stdout).to.equal(`railgate ${PACKAGE.version}\n`);

    const top = await railgate(["--help"]);
    expect(top.code).to.equal(0);
    for (const c of HTTP_COMMANDS) expect(top.stdout).to.contain(`  ${c.words}`);
    expect(top.stdout).to.contain("global options:");

    // Groups: the first word shared by several commands (explain, activity stand alone).
    const groups = [...new Set(HTTP_COMMANDS.map((c) => c.words.split(" ")[0] ?? ""))].filter(
      (g) => HTTP_COMMANDS.filter((c) => c.words.split(" ")[0] === g).length > 1,
    );
    expect(groups).to.include.members(["keys", "webhooks", "generations", "assignments"]);
    const asked = [
      ...groups.map((g) => [g]),
      ["assignments", "keys"],
      ...HTTP_COMMANDS.map((c) => c.words.split(" ")),
    ];
    // Four at a time: each is a process of its own.
    for (let i = 0; i < asked.length; i += 4) {
      await Promise.all(
        asked.slice(i, i + 4).map(async (words) => {
          const run = await railgate([...words, "--help"]);
          expect(run.code, `${words.join(" ")}: ${run.stderr}`).to.equal(0);
          const command = HTTP_COMMANDS.find((c) => c.words === words.join(" "));
          if (!command) {
            expect(run.stdout).to.match(
              new RegExp(`^usage: railgate ${words.join(" ")} <command>`),
            );
            const members = HTTP_COMMANDS.filter((c) => c.words.startsWith(`${words.join(" ")} `));
            for (const c of members) expect(run.stdout).to.contain(`  ${c.words}`);
            expect(run.stdout).to.not.contain("global options:");
            return;
          }
          // A command's own usage: its words, arguments, route and every option.
          const usage = `usage: railgate ${[command.words, ...(command.args ?? [])].join(" ")}`;
          const first = run.stdout.split("\n")[0] ?? "";
          expect(first === usage || first.startsWith(`${usage} `), first).to.equal(true);
          expect(run.stdout).to.contain(`calls ${command.api?.method} ${command.api?.path}`);
          for (const flag of Object.keys(command.options ?? {})) {
            expect(run.stdout).to.contain(`--${flag}`);
          }
          // Examples of the command itself; the global options once, in the top-level help.
          expect(run.stdout).to.match(new RegExp(`\nexamples:\n {2}railgate ${command.words}`));
          expect(run.stdout).to.not.contain("global options:");
        }),
      );
    }
  });

  it("has a command for every operation of the OpenAPI document, with each query parameter and body field", async () => {
    const doc = (await (await fetch(`${h.baseUrl}/api/v1/openapi.json`)).json()) as Json;
    // Not management operations: probes, metrics text, the docs and console pages, the
    // document itself, and /model/{author}/{slug} (the same as /models/{author}/{slug}).
    const notCli = /^\/(healthz|livez|metrics|docs|console)|^\/api\/v1\/(openapi\.json|model\/)/;
    const routes = HTTP_COMMANDS.flatMap((c) =>
      c.api ? [c.api.path, c.api.fallbackPath].filter(Boolean).map((p) => ({ c, p })) : [],
    );
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
      if (notCli.test(path)) continue;
      for (const [method, op] of Object.entries(ops as Record<string, Json>)) {
        const pattern = path.replace(/\{(\w+)\}/g, ":$1");
        const commands = routes
          .filter((r) => r.p === pattern && r.c.api?.method === method.toUpperCase())
          .map((r) => r.c);
        if (commands.length === 0) {
          missing.push(`${method.toUpperCase()} ${path}`);
          continue;
        }
        const query = new Set(commands.flatMap((c) => c.api?.query ?? []));
        for (const p of op.parameters ?? []) {
          if (p.in === "query" && !query.has(p.name)) missing.push(`${path}?${p.name}`);
        }
        const body = op.requestBody?.content?.["application/json"]?.schema?.properties ?? {};
        for (const field of Object.keys(body)) {
          const carried = commands.some((c) => c.api?.anyBody || c.api?.body.includes(field));
          if (!carried) missing.push(`${method.toUpperCase()} ${path} body ${field}`);
        }
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it("manages keys: limit, limit_reset, expires_at, rate limit, disable/enable, delete (table and --json)", async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
    const created = await json([
      "keys",
      "create",
      "--name",
      "cli key",
      "--limit",
      "5",
      "--limit-reset",
      "monthly",
      "--expires-at",
      expires,
      "--rate-limit",
      "30",
    ]);
    expect(created.key).to.be.a("string").and.not.equal("");
    const hash = created.data.hash as string;
    expect(created.data).to.include({
      name: "cli key",
      limit: 5,
      limit_reset: "monthly",
      rate_limit_per_minute: 30,
    });
    expect(Date.parse(created.data.expires_at)).to.equal(Date.parse(expires));
    // The table shows the secret beside the key's fields: it is shown this once.
    const shown = await railgate(["keys", "create", "--name", "cli key 2"]);
    expect(shown.stdout).to.match(/^FIELD +VALUE\n/);
    expect(shown.stdout).to.match(/\nkey +\S{20,}\n/);

    const got = await json(["keys", "get", hash]);
    expect(got.data.hash).to.equal(hash);
    const cleared = await json([
      "keys",
      "update",
      hash,
      "--limit",
      "null",
      "--limit-reset",
      "null",
      "--expires-at",
      "null",
      "--name",
      "renamed",
    ]);
    expect(cleared.data).to.include({
      name: "renamed",
      limit: null,
      limit_reset: null,
      expires_at: null,
    });
    expect((await json(["keys", "disable", hash])).data.disabled).to.equal(true);
    // Disabled keys are listed only on request, as GET /keys does.
    const active = await json(["keys", "list", "--limit", "100"]);
    expect(active.data.map((k: Json) => k.hash)).not.to.include(hash);
    const { header, lines } = await table(["keys", "list", "--include-disabled", "--limit", "100"]);
    expect(header).to.match(/^HASH +NAME +KIND +WORKSPACE_ID +DISABLED +LIMIT +USAGE$/);
    expect(lines.some((l) => l.startsWith(hash) && / true /.test(l))).to.equal(true);
    expect(lines.at(-1)).to.match(/^total: \d+$/);
    expect((await json(["keys", "enable", hash])).data.disabled).to.equal(false);
    const current = await json(["keys", "current"], speaker.secret);
    expect(current.data).to.include({ hash: speaker.hash, is_management_key: false });
    expect(await json(["keys", "delete", hash])).to.deep.equal({ deleted: true });
    expectRefusal(
      await railgate(["keys", "get", hash]),
      "404 Not Found",
      (await h.admin.get(`/api/v1/keys/${hash}`)).body.error.message,
    );
  });

  it("manages guardrail policies: create a budget policy, get it, assign it to a key with the expected state, delete", async () => {
    // A workspace of its own: a policy write moves its type there, away from guardrails.
    const ws = (await h.admin.post("/api/v1/workspaces", { name: "cli policies" })).body.data;
    const key = await h.createKey({ workspace_id: ws.id });
    const created = await json([
      "policies",
      "budget",
      "create",
      "--workspace",
      ws.id,
      "--name",
      "cli budget",
      "--config",
      '{"include_byok_in_budgets":true}',
      "--limit-usd",
      "25",
      "--reset-interval",
      "monthly",
    ]);
    const id = created.data.id as string;
    expect(created.data).to.include({ name: "cli budget", policy_type: "budget" });
    // The flags set their settings on top of --config.
    expect(created.data.config).to.include({
      limit_usd: 25,
      reset_interval: "monthly",
      include_byok_in_budgets: true,
    });
    expect((await json(["policies", "budget", "get", id])).data.id).to.equal(id);
    const { lines } = await table([
      "policies",
      "budget",
      "list",
      "--workspace",
      ws.id,
      "--limit",
      "100",
    ]);
    expect(lines.some((l) => l.startsWith(id))).to.equal(true);

    const state = async () =>
      (
        await json([
          "policies",
          "assignments",
          "keys",
          "get",
          key.hash,
          "--type",
          "budget",
          "--workspace",
          ws.id,
        ])
      ).data;
    const none = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };
    expect(await state()).to.deep.equal(none);
    const assign = (expected: unknown) =>
      railgate([
        "policies",
        "assignments",
        "keys",
        "assign",
        key.hash,
        "--type",
        "budget",
        "--policy",
        id,
        "--expected",
        JSON.stringify(expected),
        "--workspace",
        ws.id,
        "--json",
      ]);
    const assigned = await assign(none);
    expect(assigned.code, assigned.stderr).to.equal(0);
    expect(JSON.parse(assigned.stdout)).to.deep.equal({ data: true });
    const withPolicy = { ...none, policy_ids: [id] };
    expect(await state()).to.deep.equal(withPolicy);
    expect((await json(["policies", "budget", "get", id])).data.api_key_hashes).to.deep.equal([
      key.hash,
    ]);
    // A change from a stale state is refused as the API words it, and changes nothing.
    const stale = await assign({ ...none, policy_ids: ["00000000-0000-4000-8000-000000000000"] });
    expect(stale.code, stale.stderr).to.equal(1);
    expect(stale.stderr).to.match(/^railgate: \[409 Conflict\] .*expected_assignment/);
    expect(await state()).to.deep.equal(withPolicy);
    expectUsageError(
      await railgate(["policies", "assignments", "keys", "assign", key.hash, "--type", "budget"]),
      "--policy is required",
    );

    expect(await json(["policies", "budget", "delete", id])).to.deep.equal({ deleted: true });
    expect(await state()).to.deep.equal(none);
    expect((await railgate(["policies", "budget", "get", id])).stderr).to.match(
      /^railgate: \[404 Not Found\] /,
    );
  });

  it("keeps a policy's history: checks refuse a replace unless --force, versions, restore, checks", async () => {
    const ws = (await h.admin.post("/api/v1/workspaces", { name: "cli policy versions" })).body
      .data;
    const check = {
      name: "an address is redacted",
      request: { model: MODELS.basic, input: "write to ann@example.com" },
      expect: "redacted",
    };
    const created = await json([
      "policies",
      "moderation",
      "create",
      "--workspace",
      ws.id,
      "--name",
      "cli moderation",
      "--config",
      '{"content_filter_builtins":[{"slug":"email","action":"redact"}]}',
      "--checks",
      JSON.stringify([check]),
    ]);
    const id = created.data.id as string;
    expect(created.data.last_check_run.passed).to.equal(true);
    const replace = (...more: string[]) =>
      railgate([
        "policies",
        "moderation",
        "replace",
        id,
        "--name",
        "blocks",
        "--config",
        '{"content_filter_builtins":[{"slug":"email","action":"block"}]}',
        ...more,
      ]);
    const refused = await replace();
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(
      /^railgate: \[409 Conflict\] .*an address is redacted: expected redacted, got refused/,
    );
    const forced = await replace("--force", "--json");
    expect(forced.code, forced.stderr).to.equal(0);
    expect(JSON.parse(forced.stdout).data.last_check_run.forced).to.equal(true);
    const { header, lines } = await table(["policies", "moderation", "versions", id]);
    expect(header.split(/\s+/).slice(0, 3)).to.deep.equal(["VERSION", "CREATED_AT", "ACTION"]);
    expect(lines.map((l) => l.split(/\s+/)[0]).slice(0, 2)).to.deep.equal(["2", "1"]);
    const first = await json(["policies", "moderation", "version", id, "1"]);
    expect(first.data.policy.name).to.equal("cli moderation");
    // Version 1's checks pass on version 1's config: no --force needed.
    const restored = await json(["policies", "moderation", "restore", id, "1"]);
    expect(restored.data.name).to.equal("cli moderation");
    const run = await json(["policies", "moderation", "checks", id]);
    expect(run.data.passed).to.equal(true);
    // Budget policies take no checks: no command for them.
    expectUsageError(await railgate(["policies", "budget", "checks", id]), "checks");
  });

  it("keeps a workspace-wide policy's history: versions, restore past failing checks with --force, checks, its what-if", async () => {
    const check = {
      name: "the basic model is allowed",
      request: { model: MODELS.basic },
      expect: "allowed",
    };
    const created = await json([
      "policies",
      "account",
      "create",
      "--name",
      "cli account",
      "--type",
      "model_availability",
      "--config",
      JSON.stringify({ allowed_models: [MODELS.basic] }),
      "--checks",
      JSON.stringify([check]),
    ]);
    const id = created.data.id as string;
    expect(created.data.last_check_run.passed).to.equal(true);
    const replace = (...more: string[]) =>
      railgate([
        "policies",
        "account",
        "replace",
        id,
        "--name",
        "elsewhere",
        "--config",
        '{"allowed_models":["openai/tts-1"]}',
        ...more,
      ]);
    const refused = await replace();
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(
      /^railgate: \[409 Conflict\] .*the basic model is allowed: expected allowed, got refused/,
    );
    expect((await replace("--force")).code).to.equal(0);
    const { lines } = await table(["policies", "account", "versions", id]);
    expect(lines.map((l) => l.split(/\s+/)[0]).slice(0, 2)).to.deep.equal(["2", "1"]);
    const first = await json(["policies", "account", "version", id, "1"]);
    expect(first.data.policy.name).to.equal("cli account");
    const againRefused = await railgate(["policies", "account", "restore", id, "2"]);
    expect(againRefused.code).to.equal(1);
    const restored = await json(["policies", "account", "restore", id, "1"]);
    expect(restored.data.name).to.equal("cli account");
    const run = await json(["policies", "account", "checks", id]);
    expect(run.data.passed).to.equal(true);
    // Its what-if: the change a replace takes, over the workspaces it covers (none here).
    const simulated = await json([
      "policies",
      "account",
      "simulate",
      id,
      "--change",
      JSON.stringify({ name: "what if", config: { allowed_models: ["openai/tts-1"] } }),
    ]);
    expect(simulated.data.requests_replayed).to.equal(0);
    const badChange = await railgate([
      "policies",
      "account",
      "simulate",
      id,
      "--change",
      JSON.stringify({ name: "what if" }),
    ]);
    expect(badChange.code).to.equal(1);
    expect(badChange.stderr).to.match(/^railgate: \[400 Bad Request\] .*config is required/);
    expect(await json(["policies", "account", "delete", id])).to.deep.equal({ deleted: true });
  });

  it("shadows a workspace-wide policy's change over HTTP and --grpc alike: start, show, promote, end", async () => {
    const env = {
      RAILGATE_GUARDRAIL_GRPC_URL: `http://127.0.0.1:${h.system.guardrailGrpcPort}`,
      RAILGATE_SPEECH_GRPC_URL: `http://127.0.0.1:${h.system.speechGrpcPort}`,
    };
    const grpc = (args: string[]) => railgate(["--grpc", ...args], MANAGEMENT_KEY, env);
    const grpcJson = async (args: string[]): Promise<Json> => {
      const run = await grpc([...args, "--json"]);
      expect(run.stderr, run.stderr).to.equal("");
      expect(run.code).to.equal(0);
      return JSON.parse(run.stdout);
    };
    /** One refusal as each transport words it: the same message after its own code. */
    const expectBothRefuse = async (args: string[], status: string, message: string) => {
      const [http, viaGrpc] = await Promise.all([railgate(args), grpc(args)]);
      expectRefusal(http, status, message);
      expect(viaGrpc.code, viaGrpc.stderr).to.equal(1);
      expect(viaGrpc.stdout).to.equal("");
      expect(viaGrpc.stderr).to.match(/^railgate: \[[a-z_]+\] /);
      expect(viaGrpc.stderr.replace(/^railgate: \[[a-z_]+\] /, "")).to.equal(`${message}\n`);
    };
    const ws = (await h.admin.post("/api/v1/workspaces", { name: "cli account shadow" })).body.data;
    const key = await h.createKey({ workspace_id: ws.id });
    const emails = { content_filter_builtins: [{ slug: "email", action: "flag" }] };
    const created = await json([
      "policies",
      "account",
      "create",
      "--name",
      "cli account shadow",
      "--type",
      "moderation",
      "--config",
      JSON.stringify(emails),
      "--workspaces",
      ws.id,
    ]);
    const id = created.data.id as string;
    const path = `/api/v1/guardrails/policies/account/${id}/shadow`;
    const show = ["policies", "account", "shadow", "show", id];
    // No shadow yet: the API's 404, word for word, over both transports.
    const none = await h.admin.get(path);
    expect(none.status).to.equal(404);
    await expectBothRefuse(show, "404 Not Found", none.body.error.message);

    const cards = {
      name: "cards",
      config: { content_filter_builtins: [{ slug: "credit-card", action: "redact" }] },
    };
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const start = (change: unknown) => [
      "policies",
      "account",
      "shadow",
      "start",
      id,
      "--change",
      JSON.stringify(change),
      "--expires-at",
      expires,
    ];
    const started = await grpcJson(start(cards));
    expect(started.data.change).to.deep.equal(cards);
    expect(started.data.expires_at).to.equal(expires);
    const second = await h.admin.post(path, { change: cards, expires_at: expires });
    expect(second.status).to.equal(409);
    await expectBothRefuse(start(cards), "409 Conflict", second.body.error.message);

    const spoken = await h.speak(
      { model: MODELS.basic, voice: "alloy", input: "Card 4111 1111 1111 1111." },
      { key: key.secret },
    );
    expect(spoken.status).to.equal(200);
    const report = await pollUntil(
      () => json(show),
      (r: Json) => r.data.outcomes_changed >= 1,
    );
    expect(report.data.changes).to.deep.equal([{ live: "allowed", shadow: "redacted", count: 1 }]);
    expect(report.data.workspace_ids).to.deep.equal([ws.id]);
    expect(report.data.started_at).to.equal(started.data.started_at);
    // The report, as a table and as JSON, byte for byte the same over both transports.
    for (const args of [show, [...show, "--json"]]) {
      const [http, viaGrpc] = await Promise.all([railgate(args), grpc(args)]);
      expect(http.code, http.stderr).to.equal(0);
      expect(viaGrpc.code, viaGrpc.stderr).to.equal(0);
      expect(viaGrpc.stdout).to.equal(http.stdout);
    }

    const promoted = await grpcJson(["policies", "account", "shadow", "promote", id, "--force"]);
    expect(promoted.data).to.deep.include({ id, name: "cards", config: cards.config });
    const listed = await json(["policies", "account", "list", "--type", "moderation"]);
    expect(listed.data.find((p: Json) => p.id === id)).to.deep.equal(promoted.data);
    const ended = await h.admin.get(path);
    expect(ended.status).to.equal(404);
    await expectBothRefuse(show, "404 Not Found", ended.body.error.message);

    // End prints the same over both: one shadow ended by each.
    const end = ["policies", "account", "shadow", "end", id];
    await json(start({ ...cards, name: "next" }));
    const httpEnd = await railgate(end);
    expect(httpEnd.code, httpEnd.stderr).to.equal(0);
    expect((await h.admin.get(path)).status).to.equal(404);
    await grpcJson(start({ ...cards, name: "again" }));
    const grpcEnd = await grpc(end);
    expect(grpcEnd.code, grpcEnd.stderr).to.equal(0);
    expect(grpcEnd.stdout).to.equal(httpEnd.stdout);
    expect((await h.admin.get(path)).status).to.equal(404);
    for (const run of [railgate, grpc]) {
      expectUsageError(await run(["policies", "account", "shadow", "start", id]), "--change");
    }
    expect(await json(["policies", "account", "delete", id])).to.deep.equal({ deleted: true });
  });

  it("words a refusal like the API (status, reason, the API's message) and exits 1", async () => {
    const api = await h.api.withKey(speaker.secret).get("/api/v1/keys");
    expect(api.status).to.equal(403);
    expectRefusal(
      await railgate(["keys", "list"], speaker.secret),
      "403 Forbidden",
      api.body.error.message,
    );
    // A body field the API refuses: its message, naming the field and the rule.
    const bad = await h.admin.post("/api/v1/keys", { name: "x", limit_reset: "hourly" });
    expect(bad.status).to.equal(400);
    expectRefusal(
      await railgate(["keys", "create", "--name", "x", "--limit-reset", "hourly"]),
      "400 Bad Request",
      bad.body.error.message,
    );
    // A port nothing listens on.
    const closed = `http://127.0.0.1:${await freePort()}`;
    const down = await railgate(["keys", "list", "--url", closed]);
    expect(down.code).to.equal(1);
    expect(down.stderr).to.equal(`railgate: cannot reach ${closed}: ECONNREFUSED\n`);
  });

  it("refuses a bad command line with exit 2 before calling anything", async () => {
    expectUsageError(await railgate(["keys", "list", "--colour"]), "--colour");
    expectUsageError(await railgate(["keys", "get"]), "missing HASH");
    expectUsageError(await railgate(["keys", "frobnicate"]), 'unknown command "keys frobnicate"');
    expectUsageError(await railgate(["keys"]), '"keys" needs a command');
    expectUsageError(
      await railgate(["credits", "add", "--workspace", "w", "--amount", "ten"]),
      '--amount must be a number, got "ten"',
    );
    expectUsageError(await railgate(["keys", "create"]), "--name is required");
    expectUsageError(
      await railgate(["webhooks", "update", "w", "--enabled", "yes"]),
      '--enabled must be true or false, got "yes"',
    );
    expectUsageError(await railgate(["guardrails", "create", "--body", "{"]), "--body is not JSON");
    expectUsageError(
      await railgate(["models", "get", "tts-1"]),
      'MODEL must be a model id "author/slug"',
    );
    expectUsageError(
      await railgate(["keys", "list"], MANAGEMENT_KEY, { RAILGATE_URL: "ftp://x" }),
      "RAILGATE_URL must be an http(s):// URL",
    );
  });

  it("manages workspaces and their credits", async () => {
    const ws = (await json(["workspaces", "create", "--name", "CLI team", "--slug", "cli-team"]))
      .data;
    expect(ws).to.include({ name: "CLI team", slug: "cli-team" });
    expect((await json(["workspaces", "get", ws.id])).data.id).to.equal(ws.id);
    const updated = await json(["workspaces", "update", ws.id, "--description", "from the CLI"]);
    expect(updated.data.description).to.equal("from the CLI");
    const { header, lines } = await table(["workspaces", "list"]);
    expect(header).to.match(/^ID +NAME +SLUG +IS_DEFAULT +CREATED_AT$/);
    expect(lines.some((l) => l.startsWith(ws.id) && l.includes("cli-team"))).to.equal(true);

    const added = await json(["credits", "add", "--workspace", ws.id, "--amount", "12.5"]);
    expect(added.data).to.include({ workspace_id: ws.id, balance_usd: 12.5, metered: true });
    const credits = await json(["credits", "get", "--workspace", ws.id]);
    expect(credits.data).to.include({ balance_usd: 12.5, metered: true });
    expect((await json(["workspaces", "credits", ws.id])).data.balance_usd).to.equal(12.5);
    expect((await json(["credits", "get"])).data).to.have.property("total_credits");

    expect(await json(["workspaces", "delete", ws.id])).to.deep.equal({ deleted: true });
  });

  it("manages a workspace's members, over HTTP and --grpc", async () => {
    const ws = (await json(["workspaces", "create", "--name", "CLI members"])).data;
    const added = await json(["workspaces", "members", "add", ws.id, "ann", "ben"]);
    expect(added.added_count).to.equal(2);
    expect(added.data.map((m: Json) => m.user_id)).to.deep.equal(["ann", "ben"]);
    const { header, lines } = await table(["workspaces", "members", "list", ws.slug]);
    expect(header).to.match(/^USER_ID +ROLE +IMPLICIT +CREATED_AT +ID$/);
    const users = lines.map((l) => l.split(/ +/)[0]).filter((u) => u !== "total:");
    expect(users).to.deep.equal(["ann", "ben"]);
    expect(await json(["workspaces", "members", "remove", ws.id, "ben"])).to.deep.equal({
      removed_count: 1,
    });
    const env = {
      RAILGATE_GUARDRAIL_GRPC_URL: `http://127.0.0.1:${h.system.guardrailGrpcPort}`,
      RAILGATE_SPEECH_GRPC_URL: `http://127.0.0.1:${h.system.speechGrpcPort}`,
      RAILGATE_URL: "http://127.0.0.1:1",
    };
    const grpc = (args: string[]) =>
      railgate(["--grpc", "workspaces", "members", ...args, "--json"], MANAGEMENT_KEY, env);
    const viaGrpc = await grpc(["add", ws.id, "cal"]);
    expect(viaGrpc.code, viaGrpc.stderr).to.equal(0);
    expect(JSON.parse(viaGrpc.stdout).added_count).to.equal(1);
    const listed = await grpc(["list", ws.id]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout).data).to.deep.equal(
      (await json(["workspaces", "members", "list", ws.id])).data,
    );
    const refused = await railgate(["workspaces", "members", "add", ws.id, "x".repeat(257)]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/user_ids\[0\] must be 1 to 256 characters/);
  });

  it("manages a guardrail (flags and --body), its key and member assignments, and explains a key", async () => {
    const created = await json([
      "guardrails",
      "create",
      "--name",
      "CLI budget",
      "--limit-usd",
      "5",
      "--reset-interval",
      "monthly",
      "--regions",
      "europe,us",
    ]);
    const id = created.data.id as string;
    expect(created.data).to.include({
      name: "CLI budget",
      limit_usd: 5,
      reset_interval: "monthly",
    });
    expect(created.data.allowed_data_regions).to.deep.equal(["europe", "us"]);
    const updated = await json(["guardrails", "update", id, "--body", '{"limit_usd":7}']);
    expect(updated.data.limit_usd).to.equal(7);
    expect((await json(["guardrails", "get", id])).data.limit_usd).to.equal(7);
    const { header, lines } = await table(["guardrails", "list"]);
    expect(header).to.match(/^ID +NAME +WORKSPACE_ID/);
    expect(lines.some((l) => l.startsWith(id) && l.includes("CLI budget"))).to.equal(true);

    expect(await json(["assignments", "keys", "assign", id, speaker.hash])).to.deep.equal({
      assigned_count: 1,
    });
    const mine = await json(["assignments", "keys", "list", "--guardrail", id]);
    expect(mine.data.map((a: Json) => a.key_hash)).to.deep.equal([speaker.hash]);
    const every = await json(["assignments", "keys", "list", "--limit", "100"]);
    expect(every.data.some((a: Json) => a.guardrail_id === id)).to.equal(true);
    const explained = await json(["explain", speaker.hash, "--region", "europe"]);
    expect(explained.data.guardrails.map((g: Json) => g.id)).to.include(id);
    expect(await json(["assignments", "keys", "unassign", id, speaker.hash])).to.deep.equal({
      unassigned_count: 1,
    });

    expect(await json(["assignments", "members", "assign", id, "user_a", "user_b"])).to.deep.equal({
      assigned_count: 2,
    });
    const members = await table(["assignments", "members", "list", "--guardrail", id]);
    expect(members.header).to.match(/^GUARDRAIL_ID +USER_ID/);
    expect(members.lines.filter((l) => l.startsWith(id))).to.have.length(2);
    expect(
      await json(["assignments", "members", "unassign", id, "user_a", "user_b"]),
    ).to.deep.equal({
      unassigned_count: 2,
    });
    expect(await json(["guardrails", "delete", id])).to.deep.equal({ deleted: true });
  });

  it("simulates a guardrail change over the recorded requests and words a bad change like the API", async () => {
    const key = await h.createKey();
    const created = await json(["guardrails", "create", "--name", "CLI what-if"]);
    const id = created.data.id as string;
    await json(["assignments", "keys", "assign", id, key.hash]);
    for (const input of ["Twenty-four characters!!", "Budget test."]) {
      const spoken = await h.speak(
        { model: MODELS.basic, voice: "alloy", input },
        { key: key.secret },
      );
      expect(spoken.status).to.equal(200);
    }
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const args = ["guardrails", "simulate", id, "--change", '{"allowed_models":["none/none"]}'];
    const answer = await pollUntil(
      () => json([...args, "--from", from, "--to", to]),
      (r: Json) => r.data.requests_replayed >= 2,
    );
    expect(answer.data).to.include({ requests_replayed: 2, outcomes_changed: 2, newly_allowed: 0 });
    expect(answer.data.newly_refused).to.deep.equal([{ reason: "model", count: 2 }]);
    // A sample: alike records are replayed as one group and named by one of their ids.
    expect(answer.data.affected_generation_ids).to.not.be.empty;
    for (const g of answer.data.affected_generation_ids) expect(g).to.match(/^gen-/);
    // Nothing was written: the guardrail still allows every model.
    expect((await json(["guardrails", "get", id])).data.allowed_models).to.equal(null);
    const shown = await railgate([...args, "--from", from, "--to", to]);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/requests_replayed +2/);

    expectRefusal(
      await railgate(["guardrails", "simulate", id, "--change", '{"limit_usd":-1}']),
      "400 Bad Request",
      (await h.admin.post(`/api/v1/guardrails/${id}/simulate`, { change: { limit_usd: -1 } })).body
        .error.message,
    );
    expectUsageError(await railgate(["guardrails", "simulate", id]), "--change");
    const help = await railgate(["guardrails", "simulate", "--help"]);
    expect(help.stdout).to.include("railgate guardrails simulate ID --change");
    await json(["guardrails", "delete", id]);
  });

  it("shadows a guardrail change, reports what it decided differently, and promotes or ends it", async () => {
    const key = await h.createKey();
    const created = await json(["guardrails", "create", "--name", "CLI shadow"]);
    const id = created.data.id as string;
    await json(["assignments", "keys", "assign", id, key.hash]);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const start = [
      "guardrails",
      "shadow",
      "start",
      id,
      "--change",
      '{"allowed_models":["none/none"]}',
    ];
    const started = await json([...start, "--expires-at", expires]);
    expect(started.data.change).to.deep.equal({ allowed_models: ["none/none"] });
    expectRefusal(
      await railgate([...start, "--expires-at", expires]),
      "409 Conflict",
      (
        await h.admin.post(`/api/v1/guardrails/${id}/shadow`, {
          change: { allowed_models: ["none/none"] },
          expires_at: expires,
        })
      ).body.error.message,
    );
    const spoken = await h.speak(
      { model: MODELS.basic, voice: "alloy", input: "Shadowed." },
      { key: key.secret },
    );
    expect(spoken.status).to.equal(200);
    const report = await pollUntil(
      () => json(["guardrails", "shadow", "show", id]),
      (r: Json) => r.data.outcomes_changed >= 1,
    );
    expect(report.data.expired).to.equal(false);
    await json(["guardrails", "shadow", "promote", id]);
    expect((await json(["guardrails", "get", id])).data.allowed_models).to.deep.equal([
      "none/none",
    ]);
    expect((await railgate(["guardrails", "shadow", "show", id])).code).to.not.equal(0);
    await json([
      ...start.slice(0, 4),
      "--change",
      '{"description":"next"}',
      "--expires-at",
      expires,
    ]);
    await railgate(["guardrails", "shadow", "end", id]);
    expect((await h.admin.get(`/api/v1/guardrails/${id}/shadow`)).status).to.equal(404);
    expectUsageError(await railgate(["guardrails", "shadow", "start", id]), "--change");
    await json(["guardrails", "delete", id]);
  });

  it("simulates and shadows a policy change, reports what it decided differently, and promotes or ends it", async () => {
    // A workspace of its own: a policy write moves its type there, away from guardrails.
    const ws = (await h.admin.post("/api/v1/workspaces", { name: "cli policy shadow" })).body.data;
    const key = await h.createKey({ workspace_id: ws.id });
    const emails = { content_filter_builtins: [{ slug: "email", action: "flag" }] };
    const created = await json([
      "policies",
      "moderation",
      "create",
      "--workspace",
      ws.id,
      "--name",
      "cli moderation",
      "--config",
      JSON.stringify(emails),
      "--keys",
      key.hash,
    ]);
    const id = created.data.id as string;
    const cards = {
      name: "cards",
      config: { content_filter_builtins: [{ slug: "credit-card", action: "redact" }] },
    };
    const simulated = await json([
      "policies",
      "moderation",
      "simulate",
      id,
      "--change",
      JSON.stringify(cards),
    ]);
    // No request was recorded yet: the changed filters had nothing to replay, and none went unreplayed.
    expect(simulated.data.not_replayed).to.deep.equal([]);
    expect(
      simulated.data.content_replay.map((c: Json) => [
        c.field,
        c.from_detections,
        c.from_encrypted_input,
        c.not_replayed,
      ]),
    ).to.deep.equal([["config.content_filter_builtins", 0, 0, 0]]);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const start = ["policies", "moderation", "shadow", "start", id, "--change"];
    const started = await json([...start, JSON.stringify(cards), "--expires-at", expires]);
    expect(started.data.change).to.deep.equal(cards);
    expectRefusal(
      await railgate([...start, JSON.stringify(cards), "--expires-at", expires]),
      "409 Conflict",
      (
        await h.admin.post(`/api/v1/guardrails/policies/moderation/${id}/shadow`, {
          change: cards,
          expires_at: expires,
        })
      ).body.error.message,
    );
    const spoken = await h.speak(
      { model: MODELS.basic, voice: "alloy", input: "Card 4111 1111 1111 1111." },
      { key: key.secret },
    );
    expect(spoken.status).to.equal(200);
    const report = await pollUntil(
      () => json(["policies", "moderation", "shadow", "show", id]),
      (r: Json) => r.data.outcomes_changed >= 1,
    );
    expect(report.data.changes).to.deep.equal([{ live: "allowed", shadow: "redacted", count: 1 }]);
    await json(["policies", "moderation", "shadow", "promote", id]);
    expect((await json(["policies", "moderation", "get", id])).data.config).to.deep.equal(
      cards.config,
    );
    expect((await railgate(["policies", "moderation", "shadow", "show", id])).code).to.not.equal(0);
    await json([...start, JSON.stringify({ ...cards, name: "next" }), "--expires-at", expires]);
    await railgate(["policies", "moderation", "shadow", "end", id]);
    expect(
      (await h.admin.get(`/api/v1/guardrails/policies/moderation/${id}/shadow`)).status,
    ).to.equal(404);
    expectUsageError(await railgate(["policies", "moderation", "shadow", "start", id]), "--change");
  });

  it("lists, counts and describes models; a standard key's own models", async () => {
    const listed = await json(["models", "list", "--providers", "acme", "--limit", "50"]);
    const ids = listed.data.map((m: Json) => m.id);
    expect(ids).to.include(MODELS.basic);
    const count = await json(["models", "count", "--providers", "acme"]);
    expect(count.data.count).to.be.at.least(1);
    const model = await json(["models", "get", MODELS.basic]);
    expect(model.data.id).to.equal(MODELS.basic);
    const endpoints = await json(["models", "endpoints", MODELS.basic]);
    expect(endpoints.data.endpoints.length).to.be.above(0);
    const mine = await json(["models", "mine"], speaker.secret);
    expect(mine.data.map((m: Json) => m.id)).to.include(MODELS.basic);
    expect((await json(["models", "zdr"])).data).to.be.an("array");
    const { header } = await table(["models", "list", "--q", "basic"]);
    expect(header).to.match(/^ID +NAME +CREATED +CONTEXT_LENGTH$/);
    // A filter the API refuses: its message.
    const bad = await h.admin.get("/api/v1/models?max_price=cheap");
    expectRefusal(
      await railgate(["models", "list", "--max-price", "cheap"]),
      "400 Bad Request",
      bad.body.error.message,
    );
  });

  it("speaks into a file and pages the request log by cursor; activity, usage and the audit log", async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const out = join(dir, `speech-${n}.mp3`);
      const spoken = await json(
        ["speak", `Words number ${n}.`, "--model", MODELS.basic, "--voice", "alloy", "--out", out],
        speaker.secret,
      );
      expect(spoken.data.generation_id).to.match(/^gen-/);
      expect(spoken.data.bytes).to.equal(readFileSync(out).length).and.be.above(0);
      ids.push(spoken.data.generation_id);
    }
    // A refusal leaves no file: the management key may not speak.
    const refused = join(dir, "refused.mp3");
    const no = await railgate([
      "speak",
      "Hi.",
      "--model",
      MODELS.basic,
      "--voice",
      "alloy",
      "--out",
      refused,
    ]);
    expect(no.code).to.equal(1);
    expect(no.stderr).to.match(/^railgate: \[403 Forbidden\] /);
    expect(existsSync(refused)).to.equal(false);

    // The writer flushes shortly after each request: wait for the three records.
    await pollUntil(
      () => json(["generations", "list", "--key-hash", speaker.hash], speaker.secret),
      (page: Json) => page.data.length >= 3,
    );
    const first = await json(["generations", "list", "--limit", "2"], speaker.secret);
    expect(first.data.map((g: Json) => g.id)).to.deep.equal([ids[2], ids[1]]);
    expect(first.next_cursor).to.be.a("string");
    const second = await json(
      ["generations", "list", "--limit", "2", "--cursor", first.next_cursor],
      speaker.secret,
    );
    expect(second.data.map((g: Json) => g.id)).to.deep.equal([ids[0]]);
    expect(second.next_cursor).to.equal(null);
    // The table says how to get the next page.
    const paged = await table(["generations", "list", "--limit", "2"], speaker.secret);
    expect(paged.header).to.match(/^ID +CREATED_AT +MODEL +PROVIDER +STATUS/);
    expect(paged.lines.at(-1)).to.equal(`next page: --cursor ${first.next_cursor}`);
    const filtered = await json([
      "generations",
      "list",
      "--key-hash",
      speaker.hash,
      "--model",
      MODELS.basic,
      "--status",
      "completed",
    ]);
    expect(filtered.data.map((g: Json) => g.id)).to.include.members(ids);
    const one = await json(["generations", "get", ids[0] ?? ""], speaker.secret);
    expect(one.data).to.include({ id: ids[0], model: MODELS.basic, status: "completed" });

    // Activity counts completed UTC days only: today's requests are not in it yet, and
    // today is no --date it takes (the API's message says which are).
    const activity = await json(["activity", "--key-hash", speaker.hash]);
    expect(activity).to.deep.equal({ data: [] });
    const today = new Date().toISOString().slice(0, 10);
    const notYet = await h.admin.get(`/api/v1/activity?date=${today}`);
    expect(notYet.status).to.equal(400);
    expectRefusal(
      await railgate(["activity", "--date", today]),
      "400 Bad Request",
      notYet.body.error.message,
    );
    const usage = await json(["usage", "--granularity", "day", "--group-by", "model"]);
    expect(usage.data.some((p: Json) => p.group === MODELS.basic && p.requests >= 3)).to.equal(
      true,
    );
    const usageTable = await table(["usage", "--group-by", "model"]);
    expect(usageTable.header).to.match(/^BUCKET +GROUP +LABEL +REQUESTS +SPEND_USD/);

    const audit = await json([
      "audit",
      "list",
      "--resource-type",
      "key",
      "--resource-id",
      speaker.hash,
    ]);
    expect(audit.data.map((e: Json) => e.action)).to.deep.equal(["key.create"]);
    const auditTable = await table(["audit", "list", "--action", "key.create", "--limit", "1"]);
    expect(auditTable.header).to.match(/^AT +ACTION +RESOURCE +ACTOR +CHANGES$/);
    expect(auditTable.lines.at(-1)).to.match(/^next page: --cursor \S+$/);
  });

  it("removes the file when the audio stream breaks off mid-clip, and exits 1 saying so", async () => {
    // The status and first bytes went out: only a truncated body can tell the client.
    h.fakes.acme.behaviour = { kind: "cut", afterChunks: 1 };
    const out = join(dir, "cut.mp3");
    const run = await railgate(
      ["speak", "A clip that breaks.", "--model", MODELS.basic, "--voice", "alloy", "--out", out],
      speaker.secret,
    );
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stderr).to.match(/^railgate: the audio stream broke off after \d+ bytes: \S/);
    expect(run.stderr.trimEnd().split("\n")).to.have.length(1);
    expect(existsSync(out)).to.equal(false);
  });

  it("manages budget-alert webhooks: create, get, update, test, deliveries, delete", async () => {
    const receiver = await new WebhookReceiver().start();
    try {
      const created = await json([
        "webhooks",
        "create",
        "--webhook-url",
        receiver.url,
        "--thresholds",
        "50,90",
        "--credits-below",
        "2",
      ]);
      const id = created.data.id as string;
      expect(created.secret).to.be.a("string").and.not.equal("");
      expect(created.data).to.include({ url: receiver.url, credits_below_usd: 2, enabled: true });
      expect(created.data.thresholds_pct).to.deep.equal([50, 90]);
      receiver.secret = created.secret;
      expect((await json(["webhooks", "get", id])).data.id).to.equal(id);
      const { lines } = await table(["webhooks", "list"]);
      expect(lines.some((l) => l.startsWith(id))).to.equal(true);

      const test = await json(["webhooks", "test", id]);
      expect(test.data.event_type).to.equal("webhook.test");
      const got = await receiver.waitFor((r) => r.some((x) => x.event?.id === test.data.event_id));
      expect(got.find((x) => x.event?.id === test.data.event_id)?.verified).to.equal(true);
      const deliveries = await pollUntil(
        () => json(["webhooks", "deliveries", id]),
        (page: Json) => page.data.some((d: Json) => d.status === "delivered"),
      );
      expect(deliveries.data.map((d: Json) => [d.id, d.status])).to.deep.include([
        test.data.id,
        "delivered",
      ]);
      const { header: dh } = await table(["webhooks", "deliveries", id, "--limit", "1"]);
      expect(dh).to.match(/^ID +EVENT_TYPE +STATUS +ATTEMPTS/);

      const off = await json([
        "webhooks",
        "update",
        id,
        "--enabled",
        "false",
        "--credits-below",
        "null",
      ]);
      expect(off.data).to.include({ enabled: false, credits_below_usd: null });
      expect(await json(["webhooks", "delete", id])).to.deep.equal({ deleted: true });
    } finally {
      await receiver.close();
    }
  });

  it("still talks gRPC to the services with --grpc (its commands only)", async () => {
    const env = {
      RAILGATE_GUARDRAIL_GRPC_URL: `http://127.0.0.1:${h.system.guardrailGrpcPort}`,
      RAILGATE_SPEECH_GRPC_URL: `http://127.0.0.1:${h.system.speechGrpcPort}`,
      // The HTTP API is out of reach: only gRPC can answer.
      RAILGATE_URL: "http://127.0.0.1:1",
    };
    const run = await railgate(["--grpc", "workspaces", "list", "--json"], MANAGEMENT_KEY, env);
    expect(run.code, run.stderr).to.equal(0);
    const http = await json(["workspaces", "list"]);
    expect(JSON.parse(run.stdout).data.map((w: Json) => w.id)).to.deep.equal(
      http.data.map((w: Json) => w.id),
    );
    const grpcRefusal = await railgate(["--grpc", "keys", "list"], speaker.secret, env);
    expect(grpcRefusal.code).to.equal(1);
    expect(grpcRefusal.stderr).to.match(/^railgate: \[permission_denied\] /);
    expectUsageError(
      await railgate(["webhooks", "list"], MANAGEMENT_KEY, { ...env, RAILGATE_TRANSPORT: "grpc" }),
      '"webhooks list" is not available over gRPC',
    );
  });
});
