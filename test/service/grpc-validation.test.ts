import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { Store } from "../../store/types.js";
import { metadata, type PlainClient, statusOf, unary } from "../kit/grpc-plain.js";
import { onBothStores, usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

type Guardrail = Record<string, unknown> & { id: string; updated_at: unknown };

/**
 * A plain @grpc/grpc-js client gets exactly the answers an HTTP client gets:
 * the service checks every request itself (services/guardrail/request-rules.ts),
 * so nothing the gateway would refuse is stored through gRPC, and a refused
 * update changes nothing, updated_at included.
 */
function suite(name: string, openStore: () => Promise<Store>) {
  describe(`gRPC validation parity with HTTP (${name} store)`, () => {
    const h = usePlainGuardrailServer(openStore);
    const call = (client: PlainClient, method: string, req: unknown) =>
      unary(client, method, req, metadata({ key: MANAGEMENT_KEY }));
    const createGuardrail = async (guardrail: Record<string, unknown>) =>
      ((await call(h.guardrails, "CreateGuardrail", { guardrail })) as { guardrail: Guardrail })
        .guardrail;
    const get = async (id: string) =>
      ((await call(h.guardrails, "GetGuardrail", { id })) as { guardrail: Guardrail }).guardrail;
    const invalid = async (p: Promise<unknown>, message: RegExp) => {
      const status = await statusOf(p);
      expect(status.code, status.details).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(status.details, status.details).to.match(message);
    };

    it("refuses enum values the API does not define, on create and on update", async () => {
      const builtin = (scan_scope: unknown) => ({
        name: "scoped",
        content_filter_builtins: {
          values: [{ slug: "regex-prompt-injection", action: "FILTER_ACTION_BLOCK", scan_scope }],
        },
      });
      await invalid(
        call(h.guardrails, "CreateGuardrail", { guardrail: builtin(99) }),
        // (Up to the first comma: grpc-js decodes grpc-message with decodeURI, which leaves a
        // percent-encoded "," as "%2C"; Connect encodes it with encodeURIComponent.)
        /content_filter_builtins\[0\]\.scan_scope must be one of "user_only"/,
      );
      await invalid(
        call(h.guardrails, "CreateGuardrail", {
          guardrail: { name: "r", allowed_data_regions: { values: [7] } },
        }),
        /allowed_data_regions\[0\] must be one of/,
      );
      await invalid(
        call(h.guardrails, "CreateGuardrail", {
          guardrail: { name: "i", limit_usd: 1, reset_interval: 9 },
        }),
        /reset_interval must be one of/,
      );
      await invalid(
        call(h.guardrails, "CreateGuardrail", {
          guardrail: { name: "a", content_filters: { values: [{ pattern: "x+", action: 5 }] } },
        }),
        /content_filters\[0\]\.action is required and must be one of/,
      );
      const g = await createGuardrail(builtin("SCAN_SCOPE_USER_ONLY"));
      await invalid(
        call(h.guardrails, "UpdateGuardrail", {
          id: g.id,
          guardrail: { content_filter_builtins: builtin(42).content_filter_builtins },
          update_mask: { paths: ["content_filter_builtins"] },
        }),
        /scan_scope must be one of/,
      );
      const stored = await get(g.id);
      expect(stored.content_filter_builtins).to.deep.equal(g.content_filter_builtins);
      expect(stored.updated_at).to.equal(null);
    });

    it("refuses an update with an empty mask, and it never moves updated_at", async () => {
      const g = await createGuardrail({ name: "masked" });
      await invalid(
        call(h.guardrails, "UpdateGuardrail", { id: g.id, guardrail: { description: "x" } }),
        /update_mask must name at least 1 field/,
      );
      await invalid(
        call(h.guardrails, "UpdateGuardrail", {
          id: g.id,
          guardrail: {},
          update_mask: { paths: [] },
        }),
        /update_mask must name at least 1 field/,
      );
      const after = await get(g.id);
      expect(after.updated_at).to.equal(null);
      expect(after.description).to.equal("");
    });

    it("refuses fields set outside the mask, naming them, and changes nothing", async () => {
      const g = await createGuardrail({ name: "outside" });
      await invalid(
        call(h.guardrails, "UpdateGuardrail", {
          id: g.id,
          guardrail: { name: "renamed", description: "d" },
          update_mask: { paths: ["description"] },
        }),
        /guardrail\.name is set but update_mask does not name it/,
      );
      await invalid(
        call(h.guardrails, "UpdateGuardrail", {
          id: g.id,
          guardrail: { allowed_models: { values: ["a/b"] } },
          update_mask: { paths: ["workspace_id"] },
        }),
        /workspace_id cannot be changed/,
      );
      const after = await get(g.id);
      expect([after.name, after.description, after.updated_at]).to.deep.equal([
        "outside",
        "",
        null,
      ]);
      // The same update with the field in the mask goes through.
      const ok = (await call(h.guardrails, "UpdateGuardrail", {
        id: g.id,
        guardrail: { name: "renamed", description: "d" },
        update_mask: { paths: ["name", "description"] },
      })) as { guardrail: Guardrail };
      expect(ok.guardrail.name).to.equal("renamed");
      expect(ok.guardrail.updated_at).to.not.equal(null);
    });

    it("holds assignment calls to the HTTP rules", async () => {
      const g = await createGuardrail({ name: "assign" });
      await invalid(
        call(h.guardrails, "AssignKeys", { guardrail_id: g.id, key_hashes: [] }),
        /key_hashes must have at least 1 element/,
      );
      await invalid(
        call(h.guardrails, "UnassignMembers", { guardrail_id: g.id, member_user_ids: [""] }),
        /member_user_ids\[0\] must be 1 to 256 characters/,
      );
      await invalid(
        call(h.guardrails, "ListKeyAssignments", { guardrail_id: "nope", offset: 0, limit: 0 }),
        /guardrail_id must be a lowercase UUID/,
      );
    });

    it("refuses empty workspace and key updates, and a workspace with enabled keys is not deleted", async () => {
      const ws = (
        (await call(h.accounts, "CreateWorkspace", { name: "Grpc ws" })) as {
          workspace: { id: string; updated_at: unknown };
        }
      ).workspace;
      await invalid(
        call(h.accounts, "UpdateWorkspace", { id: ws.id, name: "x" }),
        /update_mask must name at least 1 field/,
      );
      await invalid(
        call(h.accounts, "UpdateWorkspace", {
          id: ws.id,
          name: "x",
          update_mask: { paths: ["description"] },
        }),
        /name is set but update_mask does not name it/,
      );
      const read = (await call(h.accounts, "GetWorkspace", { id: ws.id })) as {
        workspace: { name: string; updated_at: unknown };
      };
      expect([read.workspace.name, read.workspace.updated_at]).to.deep.equal(["Grpc ws", null]);

      const live = (await call(h.accounts, "CreateKey", {
        name: "live",
        kind: "KEY_KIND_STANDARD",
        workspace_id: ws.id,
      })) as { key: { hash: string } };
      // Keys follow the same mask rules: nothing changes, updated_at included.
      await invalid(
        call(h.accounts, "UpdateKey", { hash: live.key.hash, disabled: true }),
        /update_mask must name at least 1 field/,
      );
      await invalid(
        call(h.accounts, "UpdateKey", {
          hash: live.key.hash,
          name: "renamed",
          disabled: true,
          update_mask: { paths: ["name"] },
        }),
        /disabled is set but update_mask does not name it/,
      );
      const key = (await call(h.accounts, "GetKey", { hash: live.key.hash })) as {
        key: { name: string; disabled: boolean; updated_at: unknown };
      };
      expect([key.key.name, key.key.disabled, key.key.updated_at]).to.deep.equal([
        "live",
        false,
        null,
      ]);
      const refused = await statusOf(call(h.accounts, "DeleteWorkspace", { id: ws.id }));
      expect(refused.code).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(refused.details).to.match(/active \(enabled\) keys cannot be deleted/);
      expect(await h.store.getWorkspace(ws.id)).to.not.equal(undefined);
    });
  });
}

onBothStores("gRPC validation", suite);
