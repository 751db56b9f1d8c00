import type { K8sObject } from "./helm-render.js";

/**
 * Offline validation of Kubernetes objects against the API's schemas, as a registry package
 * carries them: kubernetes-models (the OpenAPI definitions of Kubernetes 1.34, compiled into
 * ajv validators) and @kubernetes-models/prometheus-operator (the CRD schemas of
 * monitoring.coreos.com, ServiceMonitor included). Nothing is fetched at run time.
 */

/** API groups whose schemas come from a package other than kubernetes-models. */
const CRD_PACKAGES: Record<string, string> = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};

interface ModelClass {
  new (data: unknown): { validate(): void };
}

/** The package module holding the model of an apiVersion and kind (`apps/v1`, `Deployment`). */
export function modulePath(apiVersion: string, kind: string): string {
  if (
    !/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion) ||
    !/^[A-Z]\w*$/.test(kind)
  ) {
    throw new Error(`not an apiVersion/kind: ${apiVersion}/${kind}`);
  }
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  const pkg = (group && CRD_PACKAGES[group]) || "kubernetes-models";
  return `${pkg}/${apiVersion}/${kind}`;
}

/**
 * The schema errors of one object (empty: valid). An apiVersion/kind with no schema is an
 * error too: nothing passes unchecked.
 */
export async function schemaErrors(object: K8sObject): Promise<string[]> {
  let Model: ModelClass | undefined;
  try {
    const module = (await import(modulePath(object.apiVersion, object.kind))) as Record<
      string,
      ModelClass
    >;
    Model = module[object.kind];
  } catch {
    Model = undefined;
  }
  if (!Model) return [`no schema for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(object).validate();
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

/** Every object's errors, prefixed by its kind and name (empty: all valid). */
export async function allSchemaErrors(objects: K8sObject[]): Promise<string[]> {
  const errors: string[] = [];
  for (const o of objects) {
    for (const e of await schemaErrors(o)) errors.push(`${o.kind} ${o.metadata?.name}: ${e}`);
  }
  return errors;
}
