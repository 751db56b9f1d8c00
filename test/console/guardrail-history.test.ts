import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { expectAccessible, screenshot, useConsole } from "./browser.js";

/**
 * A guardrail's history in the console, in a real headless Chromium: each version with the
 * diff of what it changed, a restore (refused by a failing check, then forced after the
 * operator confirms), and the checks with their last result, run again from the page.
 */
describe("console: guardrail history, restore and checks (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem();
  const c = useConsole(h);
  const { open, row } = c;
  let page: Page;
  before(() => {
    page = c.page;
  });

  it("shows each version's diff, restores one past a failing check once confirmed, and runs the checks", async () => {
    const created = await h.api.post("/api/v1/guardrails", {
      name: "History guardrail",
      description: "first",
      allowed_data_regions: ["europe"],
      checks: [
        {
          name: "Europe may use the engine",
          request: { model: "railgate/espeak-ng", region: "europe" },
          expect: "allowed",
        },
      ],
    });
    expect(created.status).to.equal(201);
    const id = created.body.data.id;
    const forced = await h.api.patch(`/api/v1/guardrails/${id}`, {
      description: "second",
      allowed_data_regions: ["us"],
      force: true,
    });
    expect(forced.status).to.equal(200);
    // Version 2 carries the check it fails: restoring it needs force.
    const back = await h.api.post(`/api/v1/guardrails/${id}/versions/1/restore`, {});
    expect(back.status).to.equal(200);

    await open("Guardrails");
    const guardrailRow = row("#guardrails-list", "History guardrail");
    await guardrailRow.getByRole("button", { name: "History of History guardrail" }).click();
    const history = page.locator("#history");
    await history.waitFor({ state: "visible" });
    const versions = page.locator("#history-versions tbody tr");
    await versions.nth(2).waitFor();
    expect(await versions.count()).to.equal(3);
    expect(await versions.nth(0).textContent()).to.include("restore of version 1");
    expect(await versions.nth(1).textContent()).to.include("update (forced)");

    await page.getByRole("button", { name: "Diff of version 2" }).click();
    const diff = page.locator("#history-diff table");
    await diff.waitFor();
    const description = diff.locator("tr").filter({ hasText: "description" });
    expect(await description.locator("td").allInnerTexts()).to.deep.equal(["first", "second"]);
    expect(
      await diff
        .locator("tr")
        .filter({ hasText: "allowed_data_regions" })
        .locator("td")
        .allTextContents(),
    ).to.deep.equal(["europe", "us"]);

    const checks = page.locator("#history-checks tbody tr");
    expect(await checks.first().textContent()).to.include("Europe may use the engine");
    expect(await checks.first().textContent()).to.include("passed");
    await expectAccessible(page, "guardrail history");
    await screenshot(page, "guardrail-history");

    // The first confirmation asks whether to restore; the second, after the 409, whether to force.
    const asked: string[] = [];
    const answer = (d: { message(): string; accept(): Promise<void> }) => {
      asked.push(d.message());
      void d.accept();
    };
    page.on("dialog", answer);
    await page.getByRole("button", { name: "Restore version 2" }).click();
    await page
      .locator("#history-result")
      .filter({ hasText: "Version 2 restored (forced)." })
      .waitFor();
    page.off("dialog", answer);
    // The refused restore is the one failed load the page saw.
    expect(c.errors.splice(0)).to.deep.equal([
      "Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]);
    expect(asked[0]).to.match(/Restore version 2 of History guardrail\?/);
    expect(asked[1]).to.match(/409: .*Europe may use the engine: expected allowed, got refused/);
    await versions.nth(3).waitFor();
    expect(await versions.nth(0).textContent()).to.include("restore of version 2 (forced)");
    const now = await h.api.get(`/api/v1/guardrails/${id}`);
    expect(now.body.data.allowed_data_regions).to.deep.equal(["us"]);

    await page.getByRole("button", { name: "Run checks" }).click();
    await page.locator("#history-result").filter({ hasText: "Some checks failed." }).waitFor();
    await checks.first().filter({ hasText: "failed" }).waitFor();
    expect(await checks.first().textContent()).to.include("refused");
  });
});
