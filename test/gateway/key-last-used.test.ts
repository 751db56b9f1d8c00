import { expect } from "chai";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { sharedTestDatabase } from "../kit/databases.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

/** A key's last_used_at: its newest request-log record, on every shape a key is read in. */
describe("gateway: a key's last_used_at", function () {
  this.timeout(120_000);
  let db: SqlDatabase;
  before(async () => {
    db = await sharedTestDatabase();
  });
  const h = useSpeechSystem({ embeddedEngine: "off" }, () => db);
  const SPEECH = { model: MODELS.basic, voice: "alloy", input: "Used once." };

  it("is null until the key makes a request, then the time of its newest record", async () => {
    const key = await h.createKey();
    const fresh = await h.admin.get(`/api/v1/keys/${key.hash}`);
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
    expect(fresh.body.data.last_used_at).to.equal(null);
    const own = await h.api.withKey(key.secret).get("/api/v1/key");
    expect(own.body.data.last_used_at).to.equal(null);

    const before = Date.now();
    const res = await h.speak(SPEECH, { key: key.secret });
    expectAudio(res);
    const generation = await h.waitForGeneration(res.headers.get("x-generation-id") as string);
    const got = await pollUntil(
      () => h.admin.get(`/api/v1/keys/${key.hash}`),
      (r: JsonResponse) => r.status === 200 && r.body.data.last_used_at !== null,
    );
    const at = Date.parse(got.body.data.last_used_at);
    expect(at).to.be.at.least(before - 1000);
    expect(at).to.equal(Date.parse(generation.created_at));

    const listed = await h.admin.get(`/api/v1/keys?workspace_id=${key.workspaceId}`);
    const row = listed.body.data.find((k: { hash: string }) => k.hash === key.hash);
    expect(row.last_used_at).to.equal(got.body.data.last_used_at);
    const current = await h.api.withKey(key.secret).get("/api/v1/key");
    expect(current.body.data.last_used_at).to.equal(got.body.data.last_used_at);
    // Another key of the workspace that made no request stays null beside it.
    const idle = await h.createKey({ workspace_id: key.workspaceId });
    const again = await h.admin.get(`/api/v1/keys?workspace_id=${key.workspaceId}`);
    const idleRow = again.body.data.find((k: { hash: string }) => k.hash === idle.hash);
    expect(idleRow.last_used_at).to.equal(null);
  });

  it("counts a refused request as a use: a disabled key's refusal moves it", async () => {
    const key = await h.createKey();
    expectAudio(await h.speak(SPEECH, { key: key.secret }));
    const first = await pollUntil(
      () => h.admin.get(`/api/v1/keys/${key.hash}`),
      (r: JsonResponse) => r.status === 200 && r.body.data.last_used_at !== null,
    );
    const off = await h.admin.patch(`/api/v1/keys/${key.hash}`, { disabled: true });
    expect(off.status, JSON.stringify(off.body)).to.equal(200);
    expect((await h.speak(SPEECH, { key: key.secret })).status).to.equal(401);
    const later = await pollUntil(
      () => h.admin.get(`/api/v1/keys/${key.hash}`),
      (r: JsonResponse) =>
        r.status === 200 &&
        Date.parse(r.body.data.last_used_at) > Date.parse(first.body.data.last_used_at),
    );
    expect(later.body.data.disabled).to.equal(true);
  });
});
