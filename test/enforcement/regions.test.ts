import { expect } from "chai";
import { REGION_NAMES } from "../../domain/enums.js";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

const TEXT = "Region check.";

describe("enforcement: ingress regions", () => {
  const w = useWorld();

  it("a key guardrail allowing europe: 403 through global and us, 200 through europe", async () => {
    const { key } = await w.gw.governedKey({ allowed_data_regions: ["europe"] });
    for (const region of ["global", "us"] as const) {
      const res = await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, region);
      expectError(res, 403, new RegExp(`region "${region}".*allowed_data_regions: europe`));
    }
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "europe"), "fast");
    expect(w.fakes.fast.requests).to.have.length(1);
  });

  it("a client cannot pick its region with a header: the listener decides", async () => {
    const { key } = await w.gw.governedKey({ allowed_data_regions: ["europe"] });
    const claims = {
      "x-railgate-region": "europe",
      "x-region": "europe",
      "x-forwarded-host": "eu.example.com",
    };
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "global", claims), 403);
    expect(w.fakes.fast.requests).to.have.length(0);
  });

  it("the embedded engine is governed alike", async () => {
    const { key } = await w.gw.governedKey({ allowed_data_regions: ["us"] });
    expectError(await w.gw.speak(key, { model: MODELS.espeak, input: TEXT }, "europe"), 403);
    expectAudio(await w.gw.speak(key, { model: MODELS.espeak, input: TEXT }, "us"), "railgate");
  });

  it("generation records carry data_region: the regional address the request was served through", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    for (const region of ["europe", "us", "global"] as const) {
      const res = await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, region);
      expectAudio(res, "fast");
      expect((await w.gw.generation(key, res)).data_region).to.equal(region);
    }
  });

  it("key ∩ workspace default: [europe, global] and [europe, us] leave only europe", async () => {
    const { ws, key } = await w.gw.governedKey({ allowed_data_regions: ["europe", "global"] });
    await w.gw.setDefault(ws, { allowed_data_regions: ["europe", "us"] });
    for (const region of ["global", "us"] as const) {
      expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, region), 403);
    }
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "europe"));
  });

  it("a member's guardrail contributes too", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { member_user_id: "user-regions-1" });
    const other = await w.gw.key(ws, { member_user_id: "user-regions-2" });
    const member = await w.gw.guardrail(ws, { allowed_data_regions: ["us"] });
    await w.gw.assignMembers(member, "user-regions-1");
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "global"), 403);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "us"));
    // Another member's keys are not governed by it.
    expectAudio(await w.gw.speak(other, { model: MODELS.fast, input: TEXT }, "global"));
    // Key ∩ member: the key guardrail allows only europe, the member only us: nothing is left.
    const keyGuardrail = await w.gw.guardrail(ws, { allowed_data_regions: ["europe"] });
    await w.gw.assignKeys(keyGuardrail, key);
    for (const region of REGION_NAMES) {
      expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, region), 403);
    }
  });

  it("refuses before any work: no upstream hears of the request, no budget is charged", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      allowed_data_regions: ["europe"],
      limit_usd: 1,
      reset_interval: "daily",
    });
    // Even a request that would be invalid later (unknown model) is refused for its region first.
    expectError(await w.gw.speak(key, { model: "nobody/nothing", input: TEXT }, "us"), 403);
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "us"), 403);
    expect(w.fakes.fast.requests).to.have.length(0);
    const explained = await w.gw.explain(key, "?region=us");
    expect(explained.region_allowed).to.equal(false);
    const budget = explained.budgets.find(
      (b: { guardrail_id: string }) => b.guardrail_id === guardrailId,
    );
    expect(budget.spent_usd).to.equal(0);
  });
});
