import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { GenerationSchema, GenerationStatus } from "../../gen/railgate/speech/v1/speech_pb.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { useContractSystem, valid } from "../kit/contract-clients.js";
import { sharedTestDatabase } from "../kit/databases.js";
import { MODELS } from "../kit/speech-catalog.js";

const DAY = 86_400_000;

describe("contract: @openrouter/sdk activity, generations by the management key", () => {
  const h = useContractSystem();

  it("analytics.getUserActivity() parses the activity of the last 30 days, and one day", async () => {
    const key = h.speech.key;
    // Activity counts completed UTC days: a record of yesterday, written as the writer does.
    const today = Math.floor(Date.now() / DAY) * DAY;
    const yesterday = new Date(today - DAY).toISOString().slice(0, 10);
    await new GenerationRecords(await sharedTestDatabase()).insert([
      create(GenerationSchema, {
        id: `gen-contract-${key.hash.slice(0, 12)}`,
        model: MODELS.basic,
        provider: "acme",
        characters: 12,
        costUsd: 0.0025,
        keyHash: key.hash,
        workspaceId: key.workspaceId,
        status: GenerationStatus.COMPLETED,
        createdAt: timestampFromMs(today - DAY + 3_600_000),
      }),
    ]);
    const all = await valid(h.admin.analytics.getUserActivity({ apiKeyHash: key.hash }));
    expect(all.data).to.have.length(1);
    expect(all.data[0]).to.deep.include({
      date: yesterday,
      model: MODELS.basic,
      providerName: "acme",
      usage: 0.0025,
      byokUsageInference: 0,
      requests: 1,
      promptTokens: 0,
    });
    const one = await valid(
      h.admin.analytics.getUserActivity({
        date: yesterday,
        workspaceId: key.workspaceId,
        groupBy: "workspace",
      }),
    );
    expect(one.data.some((a) => a.workspaceId === key.workspaceId)).to.equal(true);
    // A standard key reads its own activity through the same call.
    const own = await valid(h.user.analytics.getUserActivity({}));
    expect(own.data.map((a) => a.date)).to.include(yesterday);
  });

  it("generations.getGeneration() parses a record read with the management key", async () => {
    const res = await h.speech.speak({
      model: MODELS.basic,
      voice: "alloy",
      input: "Admin reads.",
    });
    expect(res.status).to.equal(200);
    const id = res.headers.get("x-generation-id") ?? "";
    await h.speech.waitForGeneration(id, (g) => g.status === "completed");
    const record = await valid(h.admin.generations.getGeneration({ id }));
    expect(record.data).to.include({ id, providerName: "acme", apiType: "tts" });
  });
});
