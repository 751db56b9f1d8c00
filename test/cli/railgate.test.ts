import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  bin: Record<string, string>;
};
const BIN = join(repoRoot, pkg.bin.railgate ?? "");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The built CLI (the package's `bin`) as an internal caller runs it: a separate
 * process talking gRPC to the system's real ports (RAILGATE_TRANSPORT=grpc).
 */
describe("railgate CLI in gRPC mode (the built bin against a running system)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let dir: string;
  let standard: { key: string; hash: string };

  function railgate(args: string[], key = MANAGEMENT_KEY): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        {
          env: {
            PATH: process.env.PATH,
            RAILGATE_KEY: key,
            // The CLI's default transport is the HTTP API now; this suite is its gRPC mode.
            RAILGATE_TRANSPORT: "grpc",
            RAILGATE_GUARDRAIL_GRPC_URL: `http://127.0.0.1:${system.guardrailGrpcPort}`,
            RAILGATE_SPEECH_GRPC_URL: `http://127.0.0.1:${system.speechGrpcPort}`,
          },
        },
        (err, stdout, stderr) =>
          resolve({
            code: err ? Number(err.code) : 0,
            stdout: String(stdout),
            stderr: String(stderr),
          }),
      );
    });
  }

  /** The same bin over the system's HTTP API (its default transport), to compare outputs. */
  function overHttp(args: string[]): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        {
          env: {
            PATH: process.env.PATH,
            RAILGATE_KEY: MANAGEMENT_KEY,
            RAILGATE_URL: `http://127.0.0.1:${system.gatewayPorts.global}`,
          },
        },
        (err, stdout, stderr) =>
          resolve({
            code: err ? Number(err.code) : 0,
            stdout: String(stdout),
            stderr: String(stderr),
          }),
      );
    });
  }

  async function json(args: string[], key?: string): Promise<Record<string, unknown>> {
    const run = await railgate([...args, "--json"], key);
    expect(run.stderr, run.stderr).to.equal("");
    expect(run.code).to.equal(0);
    return JSON.parse(run.stdout) as Record<string, unknown>;
  }

  function expectUsageError(run: Run, mentions: string): void {
    expect(run.code).to.equal(2);
    expect(run.stdout).to.equal("");
    // One clean line naming the problem: no stack trace.
    expect(run.stderr.trimEnd().split("\n")).to.have.length(1);
    expect(run.stderr).to.match(/^railgate: /);
    expect(run.stderr).to.contain(mentions);
  }

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url, { embeddedEngine: "auto", enginePoolSize: 1 });
    dir = await mkdtemp(join(tmpdir(), "railgate-cli-"));
    const created = (await json(["keys", "create", "--name", "cli speaker"])) as {
      key: string;
      data: { hash: string };
    };
    standard = { key: created.key, hash: created.data.hash };
  });

  after(async () => {
    await system?.close();
    await redis?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is the package's bin, built (no build per call), and prints its usage", async () => {
    expect(pkg.bin.railgate).to.equal("dist/apps/cli/railgate.js");
    expect(readFileSync(BIN, "utf8").startsWith("#!/usr/bin/env node\n")).to.equal(true);
    const run = await railgate(["--help"]);
    expect(run.code).to.equal(0);
    for (const words of ["guardrails create", "assignments members assign", "explain", "speak"]) {
      expect(run.stdout).to.contain(words);
    }
  });

  it("refuses an unknown flag, a missing flag or argument and an unknown command with exit 2", async () => {
    expectUsageError(await railgate(["guardrails", "list", "--colour"]), "--colour");
    expectUsageError(
      await railgate(["credits", "add", "--workspace", "w"]),
      "--amount is required",
    );
    expectUsageError(await railgate(["guardrails", "get"]), "missing ID");
    expectUsageError(await railgate(["guardrails", "get", "a", "b"]), 'unexpected argument "b"');
    expectUsageError(await railgate(["guardrails", "frobnicate"]), "unknown command");
    expectUsageError(
      await railgate(["credits", "add", "--workspace", "w", "--amount", "ten"]),
      "--amount must be a number",
    );
    // The gateway's own body checks, with the HTTP API's message.
    expectUsageError(
      await railgate(["guardrails", "create", "--body", '{"name":5}']),
      "name must be a string",
    );
  });

  it("exits 1 with the service's one-line reason when a call is refused", async () => {
    const run = await railgate(["guardrails", "list"], standard.key);
    expect(run.code).to.equal(1);
    expect(run.stderr.trimEnd().split("\n")).to.have.length(1);
    expect(run.stderr).to.match(/^railgate: \[permission_denied\]/);
  });

  it("manages a guardrail and its key assignment, explain included (table and --json)", async () => {
    const created = (await json([
      "guardrails",
      "create",
      "--body",
      '{"name":"CLI budget","limit_usd":5,"reset_interval":"monthly"}',
    ])) as { data: { id: string; name: string } };
    const id = created.data.id;
    expect(created.data.name).to.equal("CLI budget");

    const table = await railgate(["guardrails", "list"]);
    expect(table.code).to.equal(0);
    const [header, ...lines] = table.stdout.trimEnd().split("\n");
    expect(header).to.match(/^ID\s+NAME\s+WORKSPACE_ID/);
    expect(lines.some((l) => l.startsWith(id) && l.includes("CLI budget"))).to.equal(true);

    const updated = (await json(["guardrails", "update", id, "--body", '{"limit_usd":7}'])) as {
      data: { limit_usd: number };
    };
    expect(updated.data.limit_usd).to.equal(7);

    expect(await json(["assignments", "keys", "assign", id, standard.hash])).to.deep.equal({
      assigned_count: 1,
    });
    const listed = (await json(["assignments", "keys", "list", "--guardrail", id])) as {
      data: { key_hash: string }[];
    };
    expect(listed.data.map((a) => a.key_hash)).to.deep.equal([standard.hash]);

    const explained = (await json(["explain", standard.hash])) as {
      data: { guardrails: { id: string }[]; budgets: { limit_usd: number }[] };
    };
    expect(explained.data.guardrails.map((g) => g.id)).to.include(id);
    expect(explained.data.budgets[0]?.limit_usd).to.equal(7);

    expect(await json(["assignments", "keys", "unassign", id, standard.hash])).to.deep.equal({
      unassigned_count: 1,
    });
    expect(await json(["guardrails", "delete", id])).to.deep.equal({ deleted: true });
    const gone = await railgate(["guardrails", "get", id]);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.contain("[not_found]");
  });

  it("manages guardrail policies over GuardrailPolicyService, printing what the HTTP commands print", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the API's JSON as the CLI prints it
    type Json = any;
    // A workspace of its own: a policy write moves its type there, away from guardrails.
    const ws = ((await json(["workspaces", "create", "--name", "cli grpc policies"])) as Json).data;
    const key = ((await json(["keys", "create", "--workspace", ws.id])) as Json).data;
    const created = (await json([
      "policies",
      "budget",
      "create",
      "--workspace",
      ws.id,
      "--name",
      "grpc budget",
      "--config",
      '{"include_byok_in_budgets":true}',
      "--limit-usd",
      "25",
      "--reset-interval",
      "monthly",
    ])) as Json;
    const id = created.data.id as string;
    expect(created.data).to.include({ name: "grpc budget", policy_type: "budget" });
    expect(created.data.config).to.include({
      limit_usd: 25,
      reset_interval: "monthly",
      include_byok_in_budgets: true,
    });
    // Both transports print the same, as a table and as JSON.
    for (const args of [
      ["policies", "budget", "get", id],
      ["policies", "budget", "list", "--workspace", ws.id],
      ["policies", "budget", "list", "--workspace", ws.id, "--json"],
    ]) {
      const [grpc, http] = await Promise.all([railgate(args), overHttp(args)]);
      expect(grpc.code, grpc.stderr).to.equal(0);
      expect(grpc.stdout).to.equal(http.stdout);
    }
    const replaced = (await json([
      "policies",
      "budget",
      "replace",
      id,
      "--name",
      "grpc budget 2",
      "--config",
      '{"limit_usd":30,"reset_interval":"weekly"}',
    ])) as Json;
    expect(replaced.data).to.include({ name: "grpc budget 2" });
    expect(replaced.data.config).to.include({ limit_usd: 30, reset_interval: "weekly" });

    const state = async () =>
      (
        (await json([
          "policies",
          "assignments",
          "keys",
          "get",
          key.hash,
          "--type",
          "budget",
          "--workspace",
          ws.id,
        ])) as Json
      ).data;
    const none = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };
    expect(await state()).to.deep.equal(none);
    const change = (verb: string, expected: unknown) =>
      railgate([
        "policies",
        "assignments",
        "keys",
        verb,
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
    const assigned = await change("assign", none);
    expect(assigned.code, assigned.stderr).to.equal(0);
    expect(JSON.parse(assigned.stdout)).to.deep.equal({ data: true });
    const withPolicy = { ...none, policy_ids: [id] };
    expect(await state()).to.deep.equal(withPolicy);
    // A change from a stale state is refused by the service, and changes nothing.
    const stale = await change("assign", none);
    expect(stale.code, stale.stderr).to.equal(1);
    expect(stale.stderr).to.match(/^railgate: \[aborted\] .*expected_assignment/);
    expect(await state()).to.deep.equal(withPolicy);
    const unassigned = await change("unassign", withPolicy);
    expect(JSON.parse(unassigned.stdout)).to.deep.equal({ data: true });
    expect(await state()).to.deep.equal(none);
    // The gateway's body checks, with the HTTP API's message: a usage error before any call.
    const bad = await railgate(["policies", "budget", "create", "--body", '{"name":5}']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain("name must be a string");

    expect(await json(["policies", "budget", "delete", id])).to.deep.equal({ deleted: true });
    const gone = await railgate(["policies", "budget", "get", id]);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.match(/^railgate: \[not_found\] /);

    // Workspace-wide policies: create, list, replace, delete.
    const account = (await json([
      "policies",
      "account",
      "create",
      "--name",
      "grpc cap",
      "--type",
      "model_availability",
      "--config",
      '{"allowed_providers":["openai"]}',
      "--workspaces",
      ws.id,
    ])) as Json;
    const accountId = account.data.id as string;
    expect(account.data).to.include({ name: "grpc cap", policy_type: "model_availability" });
    expect(account.data.workspace_ids).to.deep.equal([ws.id]);
    const listArgs = ["policies", "account", "list", "--type", "model_availability", "--json"];
    const [grpcList, httpList] = await Promise.all([railgate(listArgs), overHttp(listArgs)]);
    expect(grpcList.stdout).to.equal(httpList.stdout);
    expect(JSON.parse(grpcList.stdout).data.map((p: Json) => p.id)).to.include(accountId);
    const narrowed = (await json([
      "policies",
      "account",
      "replace",
      accountId,
      "--name",
      "grpc cap",
      "--config",
      '{"allowed_providers":["openai"]}',
      "--workspaces",
      "",
    ])) as Json;
    expect(narrowed.data.workspace_ids).to.deep.equal([]);
    expect(await json(["policies", "account", "delete", accountId])).to.deep.equal({
      deleted: true,
    });
  });

  it("adds and reads a workspace's credits", async () => {
    const workspace = system.defaultWorkspaceId ?? "";
    await json(["credits", "add", "--workspace", workspace, "--amount", "12.5"]);
    const credits = (await json(["credits", "get", "--workspace", workspace])) as {
      data: { balance_usd: number; metered: boolean };
    };
    expect(credits.data).to.include({ balance_usd: 12.5, metered: true });
    // The top-up is in the audit log: the workspace's credit history.
    const history = (await json([
      "audit",
      "list",
      "--resource-type",
      "credits",
      "--workspace",
      workspace,
    ])) as { data: { action: string; changes: Record<string, unknown> }[]; next_cursor: null };
    expect(history.next_cursor).to.equal(null);
    expect(history.data.map((e) => [e.action, e.changes])).to.deep.equal([
      [
        "credits.add",
        {
          amount_usd: { before: null, after: 12.5 },
          balance_usd: { before: null, after: 12.5 },
        },
      ],
    ]);
    const table = await railgate(["audit", "list", "--action", "credits.add", "--limit", "1"]);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout.split("\n")[0]).to.match(/^AT +ACTION +RESOURCE +ACTOR +CHANGES$/);
    const refused = await railgate(["audit", "list", "--resource-type", "invoice"]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/^railgate: \[invalid_argument\] resource_type must be one of/);
  });

  it("speaks into an mp3 file (the format its name says): non-empty, starting on an MPEG frame sync", async () => {
    const out = join(dir, "hello.mp3");
    const res = (await json(
      [
        "speak",
        "Hello from the CLI.",
        "--model",
        "railgate/espeak-ng",
        "--voice",
        "alloy",
        "--out",
        out,
      ],
      standard.key,
    )) as { data: { bytes: number; content_type: string } };
    const audio = readFileSync(out);
    expect(audio.length).to.be.greaterThan(0);
    expect(res.data.bytes).to.equal(audio.length);
    expect(res.data.content_type).to.equal("audio/mpeg");
    expect(audio[0]).to.equal(0xff);
    expect((audio[1] ?? 0) & 0xe0).to.equal(0xe0);
  });

  it("speaks PCM whose length the generation record confirms", async () => {
    const out = join(dir, "hi.pcm");
    const res = (await json(
      [
        "speak",
        "Hi.",
        "--model",
        "railgate/espeak-ng",
        "--voice",
        "alloy",
        "--format",
        "pcm",
        "--out",
        out,
      ],
      standard.key,
    )) as { data: { generation_id: string; sample_rate: number; channels: number } };
    const size = statSync(out).size;
    expect(size).to.be.greaterThan(0);
    // 16-bit samples: whole frames only.
    expect(size % (2 * res.data.channels)).to.equal(0);
    const gen = (await json(["generations", "get", res.data.generation_id], standard.key)) as {
      data: { bytes: string; duration_seconds: number; status: string; data_region: string };
    };
    expect(Number(gen.data.bytes)).to.equal(size);
    // The record's enums by their API names, as the HTTP API writes them.
    expect(gen.data.status).to.equal("completed");
    expect(gen.data.data_region).to.be.oneOf(["global", "europe", "us"]);
    expect(gen.data.duration_seconds).to.be.closeTo(size / 2 / res.data.sample_rate, 1e-9);
  });

  it("leaves no file behind when the service refuses to speak", async () => {
    const out = join(dir, "refused.mp3");
    // A management key may not speak.
    const run = await railgate([
      "speak",
      "Hi.",
      "--model",
      "railgate/espeak-ng",
      "--voice",
      "alloy",
      "--out",
      out,
    ]);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain("[permission_denied]");
    expect(existsSync(out)).to.equal(false);
  });
});
