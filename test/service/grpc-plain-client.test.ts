import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { Store } from "../../store/types.js";
import { metadata, type PlainClient, unary } from "../kit/grpc-plain.js";
import { onBothStores, usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * Internal callers use the services over plain gRPC: no Connect on the client
 * side, only @grpc/grpc-js with the .proto files. The same suite runs against
 * the Redis store and the embedded store.
 */
function suite(name: string, openStore: () => Promise<Store>) {
  describe(`GuardrailService over plain @grpc/grpc-js (${name} store)`, () => {
    const h = usePlainGuardrailServer(openStore);
    // Every call authenticates from its metadata, like any other caller.
    const admin = () => metadata({ key: MANAGEMENT_KEY });
    const call = (client: PlainClient, method: string, req: unknown, md = admin()) =>
      unary(client, method, req, md);

    it("creates, reads and updates a guardrail with a field mask", async () => {
      const created = (await call(h.guardrails, "CreateGuardrail", {
        guardrail: {
          name: "grpc",
          allowed_models: { values: ["openai/gpt-4o-mini-tts"] },
          enforce_zdr: true,
          enforce_zdr_xai: false,
        },
      })) as { guardrail: Record<string, unknown> };
      const g = created.guardrail;
      expect(g.name).to.equal("grpc");
      expect(g.enforce_zdr_openai).to.equal(true);
      expect(g.enforce_zdr_xai).to.equal(false);
      expect(g.updated_at).to.equal(null);

      const got = (await call(h.guardrails, "GetGuardrail", { id: g.id })) as {
        guardrail: Record<string, unknown>;
      };
      expect((got.guardrail.allowed_models as { values: string[] }).values).to.deep.equal([
        "openai/gpt-4o-mini-tts",
      ]);

      // allowed_models in the mask without a value = null; description untouched.
      const updated = (await call(h.guardrails, "UpdateGuardrail", {
        id: g.id,
        guardrail: { name: "renamed" },
        update_mask: { paths: ["name", "allowed_models"] },
      })) as { guardrail: Record<string, unknown> };
      expect(updated.guardrail.name).to.equal("renamed");
      expect(updated.guardrail.allowed_models).to.equal(null);
      expect(updated.guardrail.updated_at).to.not.equal(null);
    });

    it("answers INVALID_ARGUMENT naming the field, and NOT_FOUND for unknown ids", async () => {
      const invalid = await call(h.guardrails, "CreateGuardrail", {
        guardrail: { name: "x", limit_usd: 5 },
      }).catch((e: grpc.ServiceError) => e);
      expect((invalid as grpc.ServiceError).code).to.equal(grpc.status.INVALID_ARGUMENT);
      expect((invalid as grpc.ServiceError).details).to.match(/limit_usd and reset_interval/);

      const missing = await call(h.guardrails, "GetGuardrail", {
        id: "00000000-0000-4000-8000-000000000000",
      }).catch((e: grpc.ServiceError) => e);
      expect((missing as grpc.ServiceError).code).to.equal(grpc.status.NOT_FOUND);
    });

    it("authenticates keys and resolves the guardrails that govern them", async () => {
      const created = (await call(h.accounts, "CreateKey", {
        name: "svc",
        kind: "KEY_KIND_STANDARD",
      })) as {
        key: { hash: string };
        secret: string;
      };
      const auth = (await call(
        h.accounts,
        "Authenticate",
        {},
        metadata({ key: created.secret }),
      )) as {
        key: { hash: string };
      };
      expect(auth.key.hash).to.equal(created.key.hash);
      const bad = await call(h.accounts, "Authenticate", {}, metadata({ key: "nope" })).catch(
        (e: grpc.ServiceError) => e,
      );
      expect((bad as grpc.ServiceError).code).to.equal(grpc.status.UNAUTHENTICATED);

      const g = (await call(h.guardrails, "CreateGuardrail", {
        guardrail: { name: "for-key" },
      })) as {
        guardrail: { id: string };
      };
      const assigned = await call(h.guardrails, "AssignKeys", {
        guardrail_id: g.guardrail.id,
        key_hashes: [created.key.hash],
      });
      expect(assigned.assigned_count).to.equal(1);
      const policy = (await call(h.guardrails, "ResolveEffectivePolicy", {
        key_hash: created.key.hash,
      })) as {
        guardrails: { source: string; guardrail: { id: string } }[];
      };
      expect(policy.guardrails.map((p) => [p.source, p.guardrail.id])).to.deep.equal([
        ["key", g.guardrail.id],
      ]);
    });
  });
}

onBothStores("plain gRPC clients", suite);
