import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { expectAccessible, screenshot, useConsole } from "./browser.js";

/**
 * Guardrail policies in the console, in a real headless Chromium: a policy created and edited
 * through the form exists so through the API, a policy mapped from a guardrail says so, the
 * workspace-wide policies are listed, what governs a key is shown per type, an assignment made
 * over a state someone else changed meanwhile is refused in words, and a delete removes it.
 */
describe("console: guardrail policies (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem();
  const c = useConsole(h);
  const { open, row } = c;
  let page: Page;
  let keyHash: string;
  let workspaceId: string;

  const policies = async () =>
    (await h.api.get(`/api/v1/guardrails/policies/budget?workspace_id=${workspaceId}`)).body
      .data as { id: string; name: string; config: Record<string, unknown> }[];
  const state = async () =>
    (
      await h.api.get(
        `/api/v1/guardrails/policies/assignments/api-keys/${keyHash}?workspace_id=${workspaceId}&policy_type=budget`,
      )
    ).body.data;

  before(async () => {
    page = c.page;
    const key = await h.api.post("/api/v1/keys", { name: "policy-bot" });
    keyHash = key.body.data.hash;
    workspaceId = key.body.data.workspace_id;
    const g = await h.api.post("/api/v1/guardrails", {
      name: "Legacy cap",
      limit_usd: 9,
      reset_interval: "monthly",
    });
    expect(g.status).to.equal(201);
    const account = await h.api.post("/api/v1/guardrails/policies/account", {
      name: "Org ceiling",
      policy_type: "budget",
      config: { limit_usd: 100, reset_interval: "monthly", include_byok_in_budgets: false },
      is_default: true,
    });
    expect(account.status).to.equal(201);
  });

  it("creates, edits, assigns past a concurrent change, and deletes a budget policy", async () => {
    await open("Policies");
    const view = page.locator("#policies");
    await page.locator("#pol-workspace").selectOption(workspaceId);
    await page.locator("#pol-type").selectOption("budget");
    const mapped = row("#policies-list", "Legacy cap");
    await mapped.waitFor();
    expect(await mapped.textContent()).to.include("mapped from guardrail Legacy cap");
    const account = row("#account-policies-list", "Org ceiling");
    await account.waitFor();
    expect(await account.textContent()).to.include("every workspace");
    expect(await view.locator("#account-policies-list .count").textContent()).to.equal(
      "1 workspace-wide policy",
    );

    await view.getByLabel("Name", { exact: true }).fill("Team cap");
    await view.getByLabel("Limit (USD)").fill("3");
    await view.getByLabel("Reset interval").selectOption("weekly");
    // The first write moves the type off the workspace's guardrails: the console asks first.
    const asked = new Promise<string>((resolve) =>
      page.once("dialog", (d) => {
        resolve(d.message());
        void d.accept();
      }),
    );
    await view.getByRole("button", { name: "Create" }).click();
    expect(await asked).to.match(
      /^This is the first budget policy change in this workspace: .*\(Legacy cap\) become policies managed here\. Continue\?$/,
    );
    await row("#policies-list", "Team cap").waitFor();
    expect(await row("#policies-list", "Legacy cap").textContent()).to.include(
      "replaces guardrail Legacy cap",
    );
    const created = (await policies()).find((p) => p.name === "Team cap");
    expect(created?.config).to.deep.equal({
      limit_usd: 3,
      reset_interval: "weekly",
      include_byok_in_budgets: false,
    });
    const id = created?.id as string;

    await view.getByRole("button", { name: "Edit policy Team cap" }).click();
    await page.locator("#policy-form-h").filter({ hasText: "Edit policy Team cap" }).waitFor();
    await view.getByLabel("Limit (USD)").fill("4");
    await view.getByRole("button", { name: "Save" }).click();
    await page.locator("#status").filter({ hasText: "Policy Team cap saved" }).waitFor();
    expect((await policies()).find((p) => p.id === id)?.config.limit_usd).to.equal(4);

    // The operator looks at what governs the key; someone else assigns another policy meanwhile.
    await view.getByLabel("Key", { exact: true }).selectOption(keyHash);
    await view.getByLabel("Policy (of the type shown)").selectOption(id);
    await view.getByRole("button", { name: "What governs it" }).click();
    const governs = page.locator("#pol-governs tbody tr");
    await governs.first().waitFor();
    expect(await governs.first().textContent()).to.include("Budget");
    // The workspace-wide budget governs the key over its own.
    expect(await governs.first().textContent()).to.include("Org ceiling");
    const other = await h.api.post("/api/v1/guardrails/policies/budget", {
      name: "Other cap",
      policy_type: "budget",
      workspace_id: workspaceId,
      config: { limit_usd: 1, reset_interval: "daily", include_byok_in_budgets: false },
    });
    const otherId = other.body.data.id;
    const taken = await h.api.request(
      "PUT",
      `/api/v1/guardrails/policies/assignments/api-keys/${keyHash}`,
      {
        assigned: true,
        expected_assignment: await state(),
        policy_id: otherId,
        policy_type: "budget",
        workspace_id: workspaceId,
      },
    );
    expect(taken.body.data).to.equal(true);

    await view.getByRole("button", { name: "Assign", exact: true }).click();
    const result = page.locator("#pol-assign-result");
    await result.filter({ hasText: "someone else changed" }).waitFor();
    expect(await result.textContent()).to.match(
      /^Not changed: someone else changed the budget policy of key policy-bot since it was shown\. It now has assigned Other cap\. Check it, then try again\.$/,
    );
    expect(c.errors.splice(0)).to.deep.equal([
      "Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]);
    expect((await state()).policy_ids).to.deep.equal([otherId]);
    // Having seen the new state, the same click assigns.
    await view.getByRole("button", { name: "Assign", exact: true }).click();
    await result.filter({ hasText: "Team cap assigned to key policy-bot." }).waitFor();
    expect((await state()).policy_ids).to.deep.equal([id]);
    await governs.first().filter({ hasText: "Team cap" }).waitFor();
    await row("#policies-list", "Team cap").filter({ hasText: "1" }).waitFor();
    await expectAccessible(page, "policies");
    await screenshot(page, "policies");

    page.once("dialog", (d) => void d.accept());
    await view.getByRole("button", { name: "Delete policy Team cap" }).click();
    await page.locator("#status").filter({ hasText: "Policy Team cap deleted." }).waitFor();
    const gone = await h.api.get(`/api/v1/guardrails/policies/budget/${id}`);
    expect(gone.status).to.equal(404);
  });

  it("creates a model availability policy from its fields and a moderation policy from JSON, and assigns one to a member", async () => {
    const view = page.locator("#policies");
    await open("Policies");
    await view.locator("#pol-workspace").selectOption(workspaceId);
    await view.locator("#pol-type").selectOption("model_availability");
    await view.locator("#policy-form-h").filter({ hasText: "model availability" }).waitFor();
    await view.getByLabel("Name", { exact: true }).fill("EU voices");
    await view.getByLabel("Allowed models").fill("railgate/espeak-ng, openai/tts-1");
    await view.getByLabel("Allowed data regions").fill("europe");
    await view.getByLabel("Workspace default (every key and member not opted out)").check();
    await view.getByRole("button", { name: "Create" }).click();
    await row("#policies-list", "EU voices").waitFor();
    const listed = await h.api.get(
      `/api/v1/guardrails/policies/model_availability?workspace_id=${workspaceId}`,
    );
    const eu = listed.body.data.find((p: { name: string }) => p.name === "EU voices");
    expect(eu.is_workspace_default).to.equal(true);
    expect(eu.config.allowed_models).to.deep.equal(["railgate/espeak-ng", "openai/tts-1"]);
    expect(eu.config.allowed_data_regions).to.deep.equal(["europe"]);

    // A bad config is refused in the API's words, beside the form.
    await view.getByRole("button", { name: "New policy" }).click();
    await view.getByLabel("Name", { exact: true }).fill("Nowhere");
    await view.getByLabel("Other settings (JSON)").fill('{"allowed_data_regions": []}');
    await view.getByRole("button", { name: "Create" }).click();
    await view
      .locator("#policy-error")
      .filter({ hasText: /^400: .*allowed_data_regions/ })
      .waitFor();
    expect(c.errors.splice(0)).to.deep.equal([
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);

    await view.locator("#pol-type").selectOption("moderation");
    await view.locator("#policy-form-h").filter({ hasText: "moderation" }).waitFor();
    await view.getByLabel("Name", { exact: true }).fill("No mail");
    await view
      .getByLabel("Other settings (JSON)")
      .fill('{"content_filter_builtins": [{"slug": "email", "action": "redact"}]}');
    await view.getByRole("button", { name: "Create" }).click();
    await row("#policies-list", "No mail").waitFor();
    const moderation = await h.api.get(
      `/api/v1/guardrails/policies/moderation?workspace_id=${workspaceId}`,
    );
    const mail = moderation.body.data.find((p: { name: string }) => p.name === "No mail");
    expect(mail.config.content_filter_builtins).to.deep.equal([
      { slug: "email", action: "redact" },
    ]);

    await view.getByLabel("Assign to").selectOption("members");
    await view.getByLabel("Member user id").fill("dana");
    await view.getByLabel("Policy (of the type shown)").selectOption(mail.id);
    await view.getByRole("button", { name: "Assign", exact: true }).click();
    await view
      .locator("#pol-assign-result")
      .filter({ hasText: "No mail assigned to member dana." })
      .waitFor();
    const dana = await h.api.get(
      `/api/v1/guardrails/policies/assignments/members/dana?workspace_id=${workspaceId}&policy_type=moderation`,
    );
    expect(dana.body.data.policy_ids).to.deep.equal([mail.id]);
    // What governs the member: the moderation policy directly, the EU default inherited.
    const governs = view.locator("#pol-governs tbody tr");
    await governs.filter({ hasText: "Moderation" }).filter({ hasText: "No mail" }).waitFor();
    expect(await governs.filter({ hasText: "Model availability" }).textContent()).to.include(
      "EU voices",
    );
  });
});
