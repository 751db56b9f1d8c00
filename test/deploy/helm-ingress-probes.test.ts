import { expect } from "chai";
import {
  container,
  find,
  type K8sObject,
  REQUIRED_VALUES,
  renderChart,
  type Values,
} from "./helm-render.js";
import { allSchemaErrors } from "./k8s-schemas.js";
import { unknownFieldErrors } from "./k8s-unknown-fields.js";

const HOSTS = { global: "api.example.com", europe: "eu.api.example.com", us: "us.api.example.com" };

const ANNOTATIONS = { "cert-manager.io/cluster-issuer": "letsencrypt" };

const INGRESS: Values = {
  ingress: {
    enabled: true,
    className: "nginx",
    annotations: ANNOTATIONS,
    hosts: HOSTS,
    tls: [{ secretName: "railgate-tls", hosts: Object.values(HOSTS) }],
  },
};

/** The chart's Ingress (off by default) and the gateway's probes, rendered by a real helm. */
describe("Helm chart: the Ingress and the gateway's probes", function () {
  this.timeout(60_000);
  let plain: K8sObject[];
  let withIngress: K8sObject[];

  before(async () => {
    [plain, withIngress] = await Promise.all([
      renderChart(REQUIRED_VALUES),
      renderChart(REQUIRED_VALUES, INGRESS),
    ]);
  });

  it("renders no Ingress unless enabled", () => {
    expect(plain.filter((o) => o.kind === "Ingress")).to.deep.equal([]);
  });

  it("routes each region's host to the gateway Service's port of that region, over TLS", async () => {
    const ingress = find(withIngress, "Ingress", "gateway");
    expect(ingress.spec.ingressClassName).to.equal("nginx");
    expect(
      (ingress.metadata as K8sObject["metadata"] & { annotations?: object }).annotations,
    ).to.deep.equal(ANNOTATIONS);
    const service = find(withIngress, "Service", "gateway");
    const rules = (ingress.spec.rules as K8sObject[]).map((r) => [
      r.host,
      r.http.paths[0].backend.service.name,
      r.http.paths[0].backend.service.port.name,
    ]);
    expect(rules).to.deep.equal([
      [HOSTS.global, service.metadata.name, "global"],
      [HOSTS.europe, service.metadata.name, "europe"],
      [HOSTS.us, service.metadata.name, "us"],
    ]);
    // Each backend port is one the Service has.
    const ports = (service.spec.ports as { name: string }[]).map((p) => p.name);
    for (const [, , port] of rules) expect(ports).to.include(port);
    expect(ingress.spec.tls).to.deep.equal([
      { secretName: "railgate-tls", hosts: Object.values(HOSTS) },
    ]);
    expect(await allSchemaErrors(withIngress)).to.deep.equal([]);
    expect(unknownFieldErrors(withIngress)).to.deep.equal([]);
  });

  it("refuses an enabled Ingress without a region's host, naming it", async () => {
    const refused = await renderChart(REQUIRED_VALUES, {
      ingress: { enabled: true, hosts: { ...HOSTS, europe: "" } },
    }).then(
      () => "rendered",
      (err: Error) => err.message,
    );
    expect(refused).to.match(/ingress\.hosts\.europe is required/);
  });

  it("keeps the probes' defaults: readiness on /healthz, liveness on /livez", () => {
    const gateway = container(plain, "gateway");
    expect(gateway.readinessProbe).to.deep.equal({
      httpGet: { path: "/healthz", port: "global" },
      periodSeconds: 5,
      timeoutSeconds: 3,
      failureThreshold: 2,
    });
    expect(gateway.livenessProbe).to.deep.equal({
      httpGet: { path: "/livez", port: "global" },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 6,
    });
  });

  it("takes the probes' path, port and periods from values", async () => {
    const objects = await renderChart(REQUIRED_VALUES, {
      gateway: {
        probes: {
          readiness: {
            path: "/railgate/healthz",
            port: 8081,
            periodSeconds: 7,
            timeoutSeconds: 4,
            failureThreshold: 3,
          },
          liveness: {
            path: "/railgate/livez",
            port: "europe",
            initialDelaySeconds: 30,
            periodSeconds: 20,
            timeoutSeconds: 2,
            failureThreshold: 5,
          },
        },
      },
    });
    const gateway = container(objects, "gateway");
    expect(gateway.readinessProbe).to.deep.equal({
      httpGet: { path: "/railgate/healthz", port: 8081 },
      periodSeconds: 7,
      timeoutSeconds: 4,
      failureThreshold: 3,
    });
    expect(gateway.livenessProbe).to.deep.equal({
      httpGet: { path: "/railgate/livez", port: "europe" },
      initialDelaySeconds: 30,
      periodSeconds: 20,
      timeoutSeconds: 2,
      failureThreshold: 5,
    });
    expect(await allSchemaErrors(objects)).to.deep.equal([]);
  });

  it("refuses a probe path that is no path, and a period that is no integer", async () => {
    const refusal = (probes: Values) =>
      renderChart(REQUIRED_VALUES, { gateway: { probes } }).then(
        () => "rendered",
        (err: Error) => err.message,
      );
    expect(await refusal({ readiness: { path: "healthz" } })).to.match(
      /gateway\/probes\/readiness\/path/,
    );
    expect(await refusal({ liveness: { periodSeconds: "often" } })).to.match(
      /gateway\/probes\/liveness\/periodSeconds/,
    );
  });
});
