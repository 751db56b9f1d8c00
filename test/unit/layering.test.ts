import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import ts from "typescript";

/**
 * The layers of docs/architecture.md's "Layout", each importing only what is below it:
 * apps -> gateway / services -> governance -> store -> domain -> platform -> gen. The gateway and the
 * services share a rank but not each other: the gateway reaches the services (and the
 * enforcement they run, governance/) only through their RPC clients in gen/, and a service
 * reaches a sibling service only over RPC too, so each can be deployed, tested and changed alone.
 */
const RANK: Record<string, number> = {
  apps: 0,
  gateway: 1,
  services: 1,
  governance: 2,
  store: 3,
  domain: 4,
  platform: 5,
  gen: 6,
};

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CHECKED = ["apps", "gateway", "services", "governance", "store", "domain", "platform"];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative import (static, dynamic, type-only, re-export) of a file, as a root path without extension. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) =>
      relative(ROOT, join(ROOT, posix.dirname(file), name))
        .split(sep)
        .join("/")
        .replace(/\.(js|ts)$/, ""),
    );
}

/** Why `from` may not import `to`, or undefined when it may. */
function violation(from: string, to: string): string | undefined {
  const [fromLayer = "", fromPart] = from.split("/");
  const [toLayer = "", toPart] = to.split("/");
  const fromRank = RANK[fromLayer];
  const toRank = RANK[toLayer];
  if (fromRank === undefined) return undefined;
  if (toRank === undefined) return `imports ${toLayer}/, which is outside the layers`;
  if (toRank < fromRank) return `climbs from ${fromLayer}/ to ${toLayer}/`;
  if (fromLayer === "gateway" && (toLayer === "services" || toLayer === "governance"))
    return `the gateway reaches ${toLayer}/ only through the services' RPC clients (gen/)`;
  if (fromLayer === "services" && toLayer === "gateway") return "a service imports the gateway";
  if (fromLayer === "services" && toLayer === "services" && fromPart !== toPart)
    return `services/${fromPart} imports its sibling services/${toPart} (reach it over RPC)`;
  return undefined;
}

function edges(): { edge: string; why: string | undefined }[] {
  return CHECKED.flatMap(sources).flatMap((file) => {
    const from = file.replace(/\.ts$/, "");
    return importsOf(file).map((to) => ({ edge: `${from} -> ${to}`, why: violation(from, to) }));
  });
}

describe("layering: every import points down", () => {
  const all = edges();

  it("finds the imports it checks (the walk reads the sources)", () => {
    expect(all.length).to.be.greaterThan(500);
    expect(all.some((e) => e.edge === "apps/all-in-one/main -> apps/all-in-one/system")).to.equal(
      true,
    );
  });

  it("no import climbs a layer, crosses from the gateway into services or between services", () => {
    const climbing = all.filter((e) => e.why !== undefined).map((e) => `${e.edge}: ${e.why}`);
    expect(climbing).to.deep.equal([]);
  });

  it("names what is wrong with an import that climbs", () => {
    expect(violation("store/key-usage", "governance/policy/windows")).to.equal(
      "climbs from store/ to governance/",
    );
    expect(violation("gateway/routes/x", "services/account/slug")).to.match(/RPC clients/);
    expect(violation("services/guardrail/a", "services/speech/b")).to.match(/sibling/);
    expect(violation("services/guardrail/a", "services/guardrail/b")).to.equal(undefined);
    expect(violation("gateway/app", "gen/railgate/x_pb")).to.equal(undefined);
  });
});
