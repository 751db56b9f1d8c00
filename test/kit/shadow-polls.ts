import { expect } from "chai";
import { shown } from "./expect.js";
import type { Api } from "./http.js";
import { pollUntil } from "./poll.js";

/**
 * A shadow's report (GET `path`) once the request log holds `count` records it decided
 * differently (they are written off the hot path), and exactly that many.
 */
// biome-ignore lint/suspicious/noExplicitAny: the report is JSON the tests inspect
export async function shadowReport(api: Api, path: string, count: number): Promise<any> {
  const res = await pollUntil(
    () => api.get(path),
    (r) => r.status !== 200 || r.body.data.outcomes_changed >= count,
  );
  expect(res.status, shown(res)).to.equal(200);
  expect(res.body.data.outcomes_changed).to.equal(count);
  return res.body.data;
}

/** The one audit event `action` recorded of resource `id`, once it is listed. */
// biome-ignore lint/suspicious/noExplicitAny: the event is JSON the tests inspect
export async function auditedOnce(api: Api, id: string, action: string): Promise<any> {
  const res = await pollUntil(
    () => api.get(`/api/v1/audit-log?resource_id=${id}&action=${action}`),
    (r) => r.status !== 200 || r.body.data.length > 0,
  );
  expect(res.body.data, action).to.have.length(1);
  return res.body.data[0];
}
