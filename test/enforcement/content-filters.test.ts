import { expect } from "chai";
import { literalListStats } from "../../governance/filters/detectors/literal-list.js";
import { filterRuns } from "../../governance/filters/index.js";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

const EMAIL = "jane.doe@example.com";
const WITH_EMAIL = `Please write to ${EMAIL} today.`;
const email = (action: string) => ({ content_filter_builtins: [{ slug: "email", action }] });

describe("enforcement: content filters", () => {
  const w = useWorld();

  it("block: 403 naming the filter, and the upstream receives nothing", async () => {
    const { key } = await w.gw.governedKey(email("block"));
    const res = await w.gw.speak(key, { model: MODELS.fast, input: WITH_EMAIL });
    expectError(res, 403, /^Request blocked by content filter: Email address$/);
    // Only prompt-injection blocks carry metadata.
    expect(Object.keys(res.body.error)).to.deep.equal(["code", "message"]);
    expect(JSON.stringify(res.body)).to.not.include(EMAIL);
    expect(w.fakes.fast.requests).to.have.length(0);
    // Text without a match passes.
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: "Nothing to see." }));
  });

  it("redact: the upstream receives the label, the record counts the hit without the text", async () => {
    const { key, guardrailId } = await w.gw.governedKey(email("redact"));
    const res = await w.gw.speak(key, { model: MODELS.fast, input: WITH_EMAIL });
    expectAudio(res, "fast");
    expect(w.fakes.fast.requests.map((r) => r.body.input)).to.deep.equal([
      "Please write to [EMAIL] today.",
    ]);
    const record = await w.gw.generation(key, res);
    expect(record.guardrail_outcomes).to.deep.equal([
      { slug: "email", label: "[EMAIL]", action: "redact", count: 1, guardrail_id: guardrailId },
    ]);
    expect(JSON.stringify(record)).to.not.include(EMAIL);
    expect(JSON.stringify(record)).to.not.include("jane");
  });

  it("flag: the upstream receives the text unchanged and the record counts each hit", async () => {
    const { key, guardrailId } = await w.gw.governedKey(email("flag"));
    const input = `${WITH_EMAIL} Or to bob@example.org.`;
    const res = await w.gw.speak(key, { model: MODELS.fast, input });
    expectAudio(res);
    expect(w.fakes.fast.requests[0]?.body.input).to.equal(input);
    const record = await w.gw.generation(key, res);
    expect(record.guardrail_outcomes).to.deep.equal([
      { slug: "email", label: "[EMAIL]", action: "flag", count: 2, guardrail_id: guardrailId },
    ]);
    expect(JSON.stringify(record)).to.not.include("example");
  });

  it("a custom pattern redacts with its label", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      content_filters: [{ pattern: "PRJ-[0-9]{4}", action: "redact", label: "[PROJECT]" }],
    });
    const res = await w.gw.speak(key, {
      model: MODELS.fast,
      input: "Ship PRJ-1234 and PRJ-9876 now.",
    });
    expectAudio(res);
    expect(w.fakes.fast.requests[0]?.body.input).to.equal("Ship [PROJECT] and [PROJECT] now.");
    const record = await w.gw.generation(key, res);
    expect(record.guardrail_outcomes).to.deep.equal([
      { slug: "custom", label: "[PROJECT]", action: "redact", count: 2, guardrail_id: guardrailId },
    ]);
  });

  it("a custom pattern without a label redacts to [REDACTED] and blocks as [BLOCKED]", async () => {
    const redact = await w.gw.governedKey({
      content_filters: [{ pattern: "PRJ-[0-9]{4}", action: "redact" }],
    });
    expectAudio(await w.gw.speak(redact.key, { model: MODELS.fast, input: "Ship PRJ-1234." }));
    expect(w.fakes.fast.requests[0]?.body.input).to.equal("Ship [REDACTED].");
    const block = await w.gw.governedKey({
      content_filters: [{ pattern: "(?i)top secret", action: "block" }],
    });
    expectError(
      await w.gw.speak(block.key, { model: MODELS.fast, input: "This is Top Secret." }),
      403,
      /^Request blocked by content filter: \[BLOCKED\]$/,
    );
    expect(w.fakes.fast.requests).to.have.length(1);
  });

  it("apply to every turn and to the instructions, top-level and per turn", async () => {
    const { key, guardrailId } = await w.gw.governedKey(email("redact"));
    const res = await w.gw.speak(key, {
      model: MODELS.steerable,
      voice: "alloy",
      instructions: `Sound like ${EMAIL} wrote it.`,
      input: [
        { text: `Mail ${EMAIL} first.` },
        { text: "Then call.", voice: "echo", instructions: "Whisper to ops@example.net." },
      ],
    });
    expectAudio(res, "steer");
    const bodies = w.fakes.steer.requests.map((r) => ({
      input: r.body.input,
      instructions: r.body.instructions,
    }));
    expect(bodies).to.deep.equal([
      { input: "Mail [EMAIL] first.", instructions: "Sound like [EMAIL] wrote it." },
      { input: "Then call.", instructions: "Whisper to [EMAIL]." },
    ]);
    const record = await w.gw.generation(key, res);
    expect(record.guardrail_outcomes).to.deep.equal([
      { slug: "email", label: "[EMAIL]", action: "redact", count: 3, guardrail_id: guardrailId },
    ]);
  });

  it("a block match in the instructions alone refuses the request", async () => {
    const { key } = await w.gw.governedKey(email("block"));
    expectError(
      await w.gw.speak(key, {
        model: MODELS.steerable,
        input: "Harmless words.",
        instructions: `Read it as ${EMAIL} would.`,
      }),
      403,
      /: Email address$/,
    );
    expect(w.fakes.steer.requests).to.have.length(0);
  });

  it("apply to a reference clip's transcript, which also reaches the provider", async () => {
    const clip = {
      type: "input_audio",
      input_audio: { data: "data:audio/wav;base64,UklGRgAAAABXQVZF" },
    };
    const transcript = { type: "text", text: `This is ${EMAIL} speaking.` };
    const redact = await w.gw.governedKey(email("redact"));
    const res = await w.gw.speak(redact.key, {
      model: MODELS.clone,
      input: "Clone me.",
      input_references: [clip, transcript],
    });
    expectAudio(res, "clone");
    const sent = w.fakes.clone.requests[0]?.body.input_references;
    expect(sent?.[1]).to.deep.equal({ type: "text", text: "This is [EMAIL] speaking." });
    expect(JSON.stringify(w.fakes.clone.requests[0]?.body)).to.not.include(EMAIL);
    const record = await w.gw.generation(redact.key, res);
    expect(record.guardrail_outcomes).to.deep.equal([
      {
        slug: "email",
        label: "[EMAIL]",
        action: "redact",
        count: 1,
        guardrail_id: redact.guardrailId,
      },
    ]);
    const block = await w.gw.governedKey(email("block"));
    expectError(
      await w.gw.speak(block.key, {
        model: MODELS.clone,
        input: "Clone me.",
        input_references: [clip, transcript],
      }),
      403,
      /: Email address$/,
    );
    expect(w.fakes.clone.requests).to.have.length(1);
  });

  it("adversarial patterns over a maximal input: every match redacted, nothing else", async () => {
    // x.*y|x made every search of the old find-all scan to the end: 10,000 x's took seconds.
    const { key, guardrailId } = await w.gw.governedKey({
      content_filters: [
        { pattern: "x.*y|x", action: "redact", label: "#" },
        { pattern: "(a|aa)*b", action: "flag", label: "[AB]" },
        { pattern: ".*.*.*=", action: "flag", label: "[EQ]" },
      ],
    });
    const input = `${"x".repeat(9_990)} aab a=`;
    const res = await w.gw.speak(key, { model: MODELS.fast, input });
    expectAudio(res);
    expect(w.fakes.fast.requests[0]?.body.input).to.equal(`${"#".repeat(9_990)} aab a=`);
    const record = await w.gw.generation(key, res);
    expect(record.guardrail_outcomes).to.deep.equal([
      { slug: "custom", label: "#", action: "redact", count: 9_990, guardrail_id: guardrailId },
      { slug: "custom", label: "[AB]", action: "flag", count: 1, guardrail_id: guardrailId },
    ]);
  });

  it("a long text is filtered on a worker thread, still before the upstream sees it", async () => {
    const { key } = await w.gw.governedKey({
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "person-name", action: "flag" },
      ],
    });
    const input = `${"The keeper lit the lamp every evening. ".repeat(240)}Write to ${EMAIL}.`;
    const before = filterRuns.worker;
    const res = await w.gw.speak(key, { model: MODELS.fast, input });
    expectAudio(res);
    expect(filterRuns.worker).to.equal(before + 1);
    const sent = w.fakes.fast.requests[0]?.body.input;
    expect(sent).to.have.length(input.length - EMAIL.length + "[EMAIL]".length);
    expect(sent).to.not.include(EMAIL);
    expect(sent?.endsWith("Write to [EMAIL].")).to.equal(true);
  });

  describe("patterns up to 100,000 characters", () => {
    /** `(?i)\b(?:zebra|term0|term1|...|qqq)\b`, exactly `chars` long. */
    function termList(chars: number): string {
      const head = "(?i)\\b(?:zebra";
      const tail = ")\\b";
      let body = "";
      for (
        let i = 0;
        head.length + body.length + `|term${i}`.length + tail.length + 2 <= chars;
        i++
      )
        body += `|term${i}`;
      const pad = chars - head.length - body.length - tail.length - 1;
      return `${head}${body}|${"q".repeat(pad)}${tail}`;
    }

    it("a 100,000-character word list is accepted, redacts, blocks and flags, compiled once per guardrail version", async () => {
      const pattern = termList(100_000);
      expect(pattern).to.have.length(100_000);
      const built = literalListStats.automataBuilt;
      const { key, guardrailId } = await w.gw.governedKey({
        content_filters: [{ pattern, action: "redact", label: "[TERM]" }],
      });
      for (const input of ["Ask about TERM42 and the Zebra.", "term9999 only.", "Nothing here."]) {
        expectAudio(await w.gw.speak(key, { model: MODELS.fast, input }));
      }
      expect(w.fakes.fast.requests.map((r) => r.body.input)).to.deep.equal([
        "Ask about [TERM] and the [TERM].",
        "[TERM] only.",
        "Nothing here.",
      ]);
      expect(literalListStats.automataBuilt, "three requests, one automaton").to.equal(built + 1);
      const res = await w.gw.admin.patch(`/api/v1/guardrails/${guardrailId}`, {
        content_filters: [{ pattern, action: "block", label: "[TERM]" }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expectError(
        await w.gw.speak(key, { model: MODELS.fast, input: "a zebra" }),
        403,
        /^Request blocked by content filter: \[TERM\]$/,
      );
      expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: "a horse" }));
      expect(literalListStats.automataBuilt, "the new version compiled once").to.equal(built + 2);
      const flag = await w.gw.governedKey({ content_filters: [{ pattern, action: "flag" }] });
      const flagged = await w.gw.speak(flag.key, { model: MODELS.fast, input: "term1, term2." });
      expectAudio(flagged);
      expect((await w.gw.generation(flag.key, flagged)).guardrail_outcomes).to.deep.equal([
        {
          slug: "custom",
          label: "[REDACTED]",
          action: "flag",
          count: 2,
          guardrail_id: flag.guardrailId,
        },
      ]);
    });

    it("a 100,001-character pattern is 400 naming the field and the limit", async () => {
      const ws = await w.gw.workspace();
      const res = await w.gw.admin.post("/api/v1/guardrails", {
        name: "too long",
        workspace_id: ws.id,
        content_filters: [
          { pattern: "fine", action: "flag" },
          { pattern: termList(100_001), action: "redact" },
        ],
      });
      expectError(res, 400, /^content_filters\[1\]\.pattern must be at most 100000 characters$/);
    });
  });

  it("a pattern that can match the empty string is refused when the guardrail is saved", async () => {
    const ws = await w.gw.workspace();
    for (const pattern of ["(.*x)?", "a*", "\\b"]) {
      const res = await w.gw.admin.post("/api/v1/guardrails", {
        name: "empty matches",
        workspace_id: ws.id,
        content_filters: [
          { pattern: "fine", action: "flag" },
          { pattern, action: "redact" },
        ],
      });
      expectError(res, 400, /^content_filters\[1\]\.pattern .*can match the empty string/);
    }
  });

  describe("several guardrails", () => {
    it("union: the workspace default's filter applies beside the key's", async () => {
      const { ws, key } = await w.gw.governedKey({
        content_filters: [{ pattern: "PRJ-[0-9]{4}", action: "redact", label: "[PROJECT]" }],
      });
      await w.gw.setDefault(ws, email("redact"));
      expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: `PRJ-1111 to ${EMAIL}` }));
      expect(w.fakes.fast.requests[0]?.body.input).to.equal("[PROJECT] to [EMAIL]");
    });

    it("block beats redact on the same text", async () => {
      const { ws, key } = await w.gw.governedKey(email("redact"));
      await w.gw.setDefault(ws, email("block"));
      expectError(
        await w.gw.speak(key, { model: MODELS.fast, input: WITH_EMAIL }),
        403,
        /: Email address$/,
      );
      expect(w.fakes.fast.requests).to.have.length(0);
    });

    it("redact beats flag on the same text", async () => {
      const { ws, key } = await w.gw.governedKey(email("flag"));
      await w.gw.setDefault(ws, email("redact"));
      const res = await w.gw.speak(key, { model: MODELS.fast, input: WITH_EMAIL });
      expectAudio(res);
      expect(w.fakes.fast.requests[0]?.body.input).to.equal("Please write to [EMAIL] today.");
      const record = await w.gw.generation(key, res);
      expect(record.guardrail_outcomes).to.deep.equal([
        {
          slug: "email",
          label: "[EMAIL]",
          action: "redact",
          count: 1,
          guardrail_id: ws.defaultGuardrailId,
        },
      ]);
    });

    it("a member's guardrail filters too", async () => {
      const ws = await w.gw.workspace();
      const key = await w.gw.key(ws, { member_user_id: "user-filters-1" });
      const g = await w.gw.guardrail(ws, email("block"));
      await w.gw.assignMembers(g, "user-filters-1");
      expectError(
        await w.gw.speak(key, { model: MODELS.fast, input: WITH_EMAIL }),
        403,
        /: Email address$/,
      );
    });
  });
});
