import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { pollUntil } from "../kit/poll.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";
import { expectAccessible, screenshot, usd, useConsole } from "./browser.js";

/**
 * The console as an operator uses it every day, in a real headless Chromium against the whole
 * system: keys (the secret shown once, copied), a refused form, a list paged, searched and
 * sorted, workspaces, credits, and budget-alert webhooks with a real receiver.
 */
describe("console for daily work (headless Chromium)", function () {
  // A browser driving a page is slow on a loaded CI machine: a longer limit, not a timed assertion.
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { errors, open, row } = c;
  let page: Page;
  before(() => {
    page = c.page;
  });

  it("creates a key (its secret shown once, copied), edits, disables, enables and deletes it", async () => {
    await open("Keys");
    const form = page.locator("#key-form");
    await form.getByLabel("Name").fill("ci-bot");
    await form.getByLabel("Spend limit").fill("5");
    await form.getByLabel("Limit resets").selectOption("weekly");
    await form.getByLabel("Expires").fill("2030-01-02T03:04");
    await form.getByRole("button", { name: "Create key" }).click();
    const secretCard = page.locator("#key-secret-card");
    await secretCard.waitFor({ state: "visible" });
    const secret = await page.getByLabel("Secret of the new key").inputValue();
    await screenshot(page, "keys-created", false);
    // The secret is the key: it authenticates as the key just made.
    const self = await h.api.withKey(secret).get("/api/v1/key");
    expect(self.status).to.equal(200);
    expect(self.body.data.name).to.equal("ci-bot");
    expect(self.body.data.limit).to.equal(5);
    expect(self.body.data.limit_reset).to.equal("weekly");
    // The field holds the browser's local time; this process runs in the same zone.
    const expires = new Date("2030-01-02T03:04");
    expect(Date.parse(self.body.data.expires_at)).to.equal(expires.getTime());
    await secretCard.getByRole("button", { name: "Copy" }).click();
    await page
      .locator("#key-secret-result")
      .filter({ hasText: "Copied to the clipboard." })
      .waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).to.equal(secret);
    await secretCard.getByRole("button", { name: "Done" }).click();
    expect(await secretCard.isHidden()).to.equal(true);
    // Gone from the page once dismissed: nothing left to read it from.
    expect(await page.locator("#key-secret").inputValue()).to.equal("");
    expect(await page.content()).to.not.include(secret);

    const hash: string = self.body.data.hash;
    const keyRow = row("#keys-list", "ci-bot");
    await keyRow.waitFor();
    // The hash is a secondary column: shown once asked for.
    const toggle = page.locator("#keys-list .columns-toggle");
    await toggle.locator("summary").click();
    await toggle.getByLabel("Hash").check();
    await toggle.locator("summary").click();
    expect(await keyRow.getByRole("cell").allInnerTexts()).to.include.members([
      "ci-bot",
      hash,
      "Active",
      `${usd(5)} weekly, ${usd(5)} left`,
      usd(0),
      new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" }).format(expires),
    ]);

    await keyRow.getByRole("button", { name: "Edit key ci-bot" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit key ci-bot" });
    await dialog.getByLabel("Name").fill("ci-robot");
    expect(await dialog.getByLabel("Expires").inputValue()).to.equal("2030-01-02T03:04");
    await dialog.getByLabel("Spend limit").fill("7.5");
    await dialog.getByLabel("Limit resets").selectOption("monthly");
    const patch = page.waitForRequest((r) => r.method() === "PATCH");
    await dialog.getByRole("button", { name: "Save key" }).click();
    // Only what changed is sent.
    expect((await patch).postDataJSON()).to.deep.equal({
      name: "ci-robot",
      limit: 7.5,
      limit_reset: "monthly",
    });
    await page.getByRole("status").filter({ hasText: "Key ci-robot saved." }).waitFor();
    const edited = (await h.api.get(`/api/v1/keys/${hash}`)).body.data;
    expect(edited).to.deep.include({
      name: "ci-robot",
      limit: 7.5,
      limit_reset: "monthly",
      disabled: false,
    });
    expect(Date.parse(edited.expires_at)).to.equal(expires.getTime());

    const renamed = row("#keys-list", "ci-robot");
    await renamed.getByRole("button", { name: "Disable key ci-robot" }).click();
    await renamed.getByText("Disabled", { exact: true }).waitFor();
    expect((await h.api.get(`/api/v1/keys/${hash}`)).body.data.disabled).to.equal(true);
    expect((await h.api.withKey(secret).get("/api/v1/key")).status).to.equal(401);
    await renamed.getByRole("button", { name: "Enable key ci-robot" }).click();
    await renamed.getByText("Active", { exact: true }).waitFor();
    expect((await h.api.get(`/api/v1/keys/${hash}`)).body.data.disabled).to.equal(false);

    page.once("dialog", (d) => void d.dismiss());
    await renamed.getByRole("button", { name: "Delete key ci-robot" }).click();
    await page.getByRole("status").filter({ hasText: "Key ci-robot kept." }).waitFor();
    expect((await h.api.get(`/api/v1/keys/${hash}`)).status).to.equal(200);
    page.once("dialog", (d) => void d.accept());
    await renamed.getByRole("button", { name: "Delete key ci-robot" }).click();
    await page.getByRole("status").filter({ hasText: "Key ci-robot deleted." }).waitFor();
    await renamed.waitFor({ state: "detached" });
    expect((await h.api.get(`/api/v1/keys/${hash}`)).status).to.equal(404);
  });

  it("shows the API's refusal of a key form as it said it", async () => {
    await open("Keys");
    const form = page.locator("#key-form");
    await form.getByLabel("Name").fill("bad limit");
    await form.getByLabel("Spend limit").fill("-1");
    await form.getByRole("button", { name: "Create key" }).click();
    const direct = await h.api.post("/api/v1/keys", { name: "bad limit", limit: -1 });
    expect(direct.status).to.equal(400);
    await page.locator("#key-form-error").filter({ hasText: direct.body.error.message }).waitFor();
    expect(await page.locator("#key-form-error").textContent()).to.equal(
      `400: ${direct.body.error.message}`,
    );
    // Chromium logs the refused POST itself: the one error this test expects.
    expect(errors.splice(0)).to.deep.equal([
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  });

  it("pages, searches and sorts a list", async () => {
    for (let i = 0; i < 30; i++) {
      const made = await h.api.post("/api/v1/keys", { name: `bulk-${String(i).padStart(2, "0")}` });
      expect(made.status).to.equal(201);
    }
    const total = (await h.api.get("/api/v1/keys?include_disabled=true&limit=100")).body.data
      .length;
    await open("Keys");
    await page.locator("#keys").getByRole("button", { name: "Refresh" }).click();
    const list = page.locator("#keys-list");
    await list.getByText(`${total} keys`, { exact: true }).waitFor();
    // 25 a page, sorted by name: the first page ends before the last bulk keys.
    expect(await list.locator("tbody tr").count()).to.equal(25);
    await list.getByText(`Page 1 of ${Math.ceil(total / 25)}`).waitFor();
    await list.getByRole("button", { name: "Next page of keys" }).click();
    await list.getByText(`Page 2 of ${Math.ceil(total / 25)}`).waitFor();
    expect(await list.locator("tbody tr").count()).to.equal(total - 25);

    await list.getByLabel("Search keys").fill("bulk-1");
    await list.getByText(`10 of ${total} keys`).waitFor();
    const names = () => list.locator("tbody tr td:first-child").allInnerTexts();
    expect(await names()).to.deep.equal([...Array(10)].map((_, i) => `bulk-1${i}`));
    await list.getByRole("button", { name: "Sort keys by Name" }).click();
    expect(await list.locator("th[aria-sort]").getAttribute("aria-sort")).to.equal("descending");
    expect(await names()).to.deep.equal([...Array(10)].map((_, i) => `bulk-1${9 - i}`));
    await list.getByLabel("Search keys").fill("");
  });

  it("creates, edits and deletes workspaces; adds credits and shows them", async () => {
    await open("Workspaces");
    const form = page.locator("#workspace-form");
    await form.getByLabel("Workspace name").fill("Team A");
    await form.getByLabel("Slug").fill("team-a");
    await form.getByRole("button", { name: "Create workspace" }).click();
    await row("#workspaces-list", "Team A").waitFor();
    const all = (await h.api.get("/api/v1/workspaces")).body.data;
    const team = all.find((w: { slug: string }) => w.slug === "team-a");
    expect(team.name).to.equal("Team A");

    await row("#workspaces-list", "Team A")
      .getByRole("button", { name: "Edit workspace Team A" })
      .click();
    await form.getByLabel("Description").fill("the first team");
    const patch = page.waitForRequest((r) => r.method() === "PATCH");
    await form.getByRole("button", { name: "Save workspace" }).click();
    expect((await patch).postDataJSON()).to.deep.equal({ description: "the first team" });
    await row("#workspaces-list", "Team A").getByRole("cell", { name: "the first team" }).waitFor();

    const scratch = await h.api.post("/api/v1/workspaces", { name: "Scratch", slug: "scratch" });
    expect(scratch.status).to.equal(201);
    await page.locator("#workspaces").getByRole("button", { name: "Refresh" }).click();
    page.once("dialog", (d) => void d.accept());
    await row("#workspaces-list", "Scratch")
      .getByRole("button", { name: "Delete workspace Scratch" })
      .click();
    await page.getByRole("status").filter({ hasText: "Workspace Scratch deleted." }).waitFor();
    expect((await h.api.get(`/api/v1/workspaces/${scratch.body.data.id}`)).status).to.equal(404);

    await open("Credits");
    const topUp = page.locator("#topup-form");
    await topUp.getByLabel("Workspace to credit").selectOption({ label: "Team A" });
    await topUp.getByLabel("Amount").fill("10");
    await topUp.getByRole("button", { name: "Add credits" }).click();
    await page
      .locator("#topup-result")
      .filter({ hasText: `Team A: ${usd(10)} added, balance ${usd(10)}.` })
      .waitFor();
    const credited = (await h.api.get(`/api/v1/workspaces/${team.id}/credits`)).body.data;
    expect(credited.balance_usd).to.equal(10);
    const teamRow = row("#credits-workspaces", "Team A");
    await teamRow.waitFor();
    expect(await teamRow.getByRole("cell").allInnerTexts()).to.deep.equal([
      "Team A",
      usd(10),
      usd(10),
      usd(0),
      usd(0),
    ]);
  });

  it("lists a workspace's members with their count, adds and removes them, accessible (axe)", async () => {
    const ws = (await h.api.post("/api/v1/workspaces", { name: "Team M", slug: "team-m" })).body
      .data;
    const owned = await h.api.post("/api/v1/keys", {
      name: "m-key",
      workspace_id: ws.id,
      member_user_id: "owner-1",
    });
    expect(owned.status).to.equal(201);
    await open("Workspaces");
    await page.locator("#workspaces").getByRole("button", { name: "Refresh" }).click();
    await row("#workspaces-list", "Team M")
      .getByRole("button", { name: "Members of workspace Team M" })
      .click();
    const count = page.locator("#wm-count");
    await count.filter({ hasText: "1 member in Team M: 0 added, 1 implicit." }).waitFor();
    // The key's owner is listed but cannot be removed here.
    const ownerRow = row("#wm-list", "owner-1");
    expect(await ownerRow.getByRole("cell").allInnerTexts()).to.include(
      "Implicit (named by a key, assignment or policy)",
    );
    expect(await ownerRow.getByRole("button").count()).to.equal(0);

    const form = page.locator("#member-form");
    await form.getByLabel("User ids").fill("ann, ben");
    await form.getByRole("button", { name: "Add members" }).click();
    await count.filter({ hasText: "3 members in Team M: 2 added, 1 implicit." }).waitFor();
    const listed = (await h.api.get(`/api/v1/workspaces/${ws.id}/members`)).body;
    expect(listed.data.map((m: { user_id: string }) => m.user_id).sort()).to.deep.equal([
      "ann",
      "ben",
      "owner-1",
    ]);
    await expectAccessible(page, "workspaces (members)");

    await row("#wm-list", "ben").getByRole("button", { name: "Remove member ben" }).click();
    await count.filter({ hasText: "2 members in Team M: 1 added, 1 implicit." }).waitFor();
    expect((await h.api.get(`/api/v1/workspaces/${ws.id}/members`)).body.total_count).to.equal(2);

    // Refused by the API (too long a user id): its message, as it said it.
    await form.getByLabel("User ids").fill("x".repeat(257));
    await form.getByRole("button", { name: "Add members" }).click();
    await page
      .locator("#member-error")
      .filter({ hasText: "400: user_ids[0] must be 1 to 256 characters" })
      .waitFor();
    expect(errors.splice(0)).to.deep.equal([
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  });

  it("creates a webhook (its secret shown once), sends a test, lists deliveries, edits and deletes it", async () => {
    const receiver = await new WebhookReceiver().start();
    try {
      await open("Webhooks");
      const form = page.locator("#webhook-form");
      await form.getByLabel("Receiver URL").fill(receiver.url);
      await form.getByLabel("Thresholds").fill("50, 90");
      await form.getByLabel("Alert when credits fall below").fill("5");
      await form.getByRole("button", { name: "Create webhook" }).click();
      const secretCard = page.locator("#webhook-secret-card");
      await secretCard.waitFor({ state: "visible" });
      receiver.secret = await page.getByLabel("Signing secret of the new webhook").inputValue();
      expect(receiver.secret).to.have.length.greaterThan(15);
      await secretCard.getByRole("button", { name: "Copy" }).click();
      expect(await page.evaluate("navigator.clipboard.readText()")).to.equal(receiver.secret);
      await secretCard.getByRole("button", { name: "Done" }).click();

      const listed = (await h.api.get("/api/v1/webhooks")).body.data;
      const hook = listed.find((w: { url: string }) => w.url === receiver.url);
      expect(hook).to.deep.include({
        thresholds_pct: [50, 90],
        credits_below_usd: 5,
        enabled: true,
      });
      const hookRow = row("#webhooks-list", receiver.url);
      await hookRow.waitFor();
      expect(await hookRow.getByRole("cell").allInnerTexts()).to.include.members([
        receiver.url,
        "50%, 90%",
        usd(5),
        "enabled",
      ]);

      // A test event: signed with the secret shown, and its delivery listed as delivered.
      await hookRow.getByRole("button", { name: `Send test event to ${receiver.url}` }).click();
      await page
        .locator("#deliveries")
        .getByRole("cell", { name: "webhook.test", exact: true })
        .waitFor();
      const got = await pollUntil(
        async () => receiver.received,
        (r) => r.length > 0,
      );
      expect(got[0]?.verified).to.equal(true);
      expect(got[0]?.event.type).to.equal("webhook.test");
      const delivered = await pollUntil(
        async () => {
          await hookRow.getByRole("button", { name: `Deliveries of ${receiver.url}` }).click();
          return (await page.locator("#deliveries tbody tr").first().textContent()) ?? "";
        },
        (text) => text.includes("delivered"),
      );
      expect(delivered).to.include("HTTP 204");
      await screenshot(page, "webhooks-deliveries");

      await hookRow.getByRole("button", { name: `Edit webhook ${receiver.url}` }).click();
      await form.getByLabel("Thresholds").fill("80");
      await form.getByLabel("Enabled").uncheck();
      const patch = page.waitForRequest((r) => r.method() === "PATCH");
      await form.getByRole("button", { name: "Save webhook" }).click();
      expect((await patch).postDataJSON()).to.deep.equal({ thresholds_pct: [80], enabled: false });
      await hookRow.getByText("disabled", { exact: true }).waitFor();
      const edited = (await h.api.get(`/api/v1/webhooks/${hook.id}`)).body.data;
      expect(edited).to.deep.include({
        thresholds_pct: [80],
        enabled: false,
        credits_below_usd: 5,
      });

      page.once("dialog", (d) => void d.accept());
      await hookRow.getByRole("button", { name: `Delete webhook ${receiver.url}` }).click();
      await hookRow.waitFor({ state: "detached" });
      expect((await h.api.get(`/api/v1/webhooks/${hook.id}`)).status).to.equal(404);
    } finally {
      await receiver.close();
    }
  });
});
