import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { Store } from "../../store/types.js";
import { metadata, type PlainClient, statusOf, unary } from "../kit/grpc-plain.js";
import { onBothStores, usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

interface Member {
  id: string;
  user_id: string;
  workspace_id: string;
  role: string;
  implicit: boolean;
}

/**
 * A plain @grpc/grpc-js client manages workspace members as the gateway does: the account
 * service checks the request itself, with a management key, and refuses what HTTP refuses.
 */
function suite(name: string, openStore: () => Promise<Store>) {
  describe(`gRPC: workspace members (${name} store)`, () => {
    const h = usePlainGuardrailServer(openStore);
    const call = (client: PlainClient, method: string, req: unknown) =>
      unary(client, method, req, metadata({ key: MANAGEMENT_KEY }));
    const workspace = async () =>
      (
        (await call(h.accounts, "CreateWorkspace", { name: `members ${Date.now()}` })) as {
          workspace: { id: string };
        }
      ).workspace.id;

    it("adds, lists and removes members with a management key", async () => {
      const id = await workspace();
      const added = (await call(h.accounts, "AddWorkspaceMembers", {
        workspace_id: id,
        user_ids: ["g1", "g2"],
      })) as { added_count: number; members: Member[] };
      expect(added.added_count).to.equal(2);
      expect(added.members.map((m) => [m.user_id, m.role, m.implicit])).to.deep.equal([
        ["g1", "WORKSPACE_MEMBER_ROLE_MEMBER", false],
        ["g2", "WORKSPACE_MEMBER_ROLE_MEMBER", false],
      ]);
      const listed = (await call(h.accounts, "ListWorkspaceMembers", {
        workspace_id: id,
        limit: 10,
      })) as { members: Member[]; total_count: number };
      expect(listed.total_count).to.equal(2);
      expect(listed.members.map((m) => m.id)).to.deep.equal(added.members.map((m) => m.id));
      const removed = (await call(h.accounts, "RemoveWorkspaceMembers", {
        workspace_id: id,
        user_ids: ["g1"],
      })) as { removed_count: number };
      expect(removed.removed_count).to.equal(1);
      expect((await h.store.listMembers(id)).map((m) => m.userId)).to.deep.equal(["g2"]);
    });

    it("refuses bad user_ids (INVALID_ARGUMENT), an unknown workspace (NOT_FOUND) and no key (UNAUTHENTICATED)", async () => {
      const id = await workspace();
      for (const [user_ids, message] of [
        [[], /user_ids must hold 1 to 100 user ids/],
        [["x".repeat(257)], /user_ids\[0\] must be 1 to 256 characters/],
      ] as const) {
        const status = await statusOf(
          call(h.accounts, "AddWorkspaceMembers", { workspace_id: id, user_ids }),
        );
        expect(status.code, status.details).to.equal(grpc.status.INVALID_ARGUMENT);
        expect(status.details).to.match(message);
      }
      const missing = await statusOf(
        call(h.accounts, "RemoveWorkspaceMembers", { workspace_id: "nope", user_ids: ["a"] }),
      );
      expect(missing.code).to.equal(grpc.status.NOT_FOUND);
      const anonymous = await statusOf(
        unary(h.accounts, "ListWorkspaceMembers", { workspace_id: id }, metadata()),
      );
      expect(anonymous.code).to.equal(grpc.status.UNAUTHENTICATED);
      expect(await h.store.listMembers(id)).to.deep.equal([]);
    });
  });
}

onBothStores("gRPC workspace members", suite);
