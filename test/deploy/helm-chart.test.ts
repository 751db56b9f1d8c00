import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { loadConfig } from "../../platform/config/config.js";
import { KNOWN_VARIABLES } from "../../platform/config/env-names.js";
import {
  container,
  containerEnv,
  find,
  type K8sObject,
  REPO,
  REQUIRED_VALUES,
  renderChart,
  type Values,
} from "./helm-render.js";
import { allSchemaErrors, schemaErrors } from "./k8s-schemas.js";
import { unknownFieldErrors } from "./k8s-unknown-fields.js";

/**
 * The Helm chart (deploy/helm/railgate) rendered by a real helm, every object validated
 * offline against the Kubernetes API schemas, and the rendered settings checked against
 * Railgate's own configuration schema.
 */

const COMPONENTS = ["gateway", "guardrail", "speech"] as const;

const TLS_VALUES: Values = {
  grpcTls: { enabled: true, secretName: "railgate-grpc-tls" },
  serviceMonitor: { enabled: true },
};

describe("Helm chart: rendered objects", function () {
  // helm runs as a child process; the first import of the schema packages takes a moment.
  this.timeout(60_000);

  let plain: K8sObject[];
  let tls: K8sObject[];
  before(async () => {
    [plain, tls] = await Promise.all([
      renderChart(REQUIRED_VALUES),
      renderChart(REQUIRED_VALUES, TLS_VALUES),
    ]);
  });

  it("renders the Deployments, Services, PDBs, HPAs, NetworkPolicies, Secret and ConfigMap", () => {
    const kinds = plain.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).to.deep.equal([
      "ConfigMap/rg-railgate-catalog",
      "Deployment/rg-railgate-gateway",
      "Deployment/rg-railgate-guardrail",
      "Deployment/rg-railgate-speech",
      "HorizontalPodAutoscaler/rg-railgate-gateway",
      "HorizontalPodAutoscaler/rg-railgate-speech",
      "NetworkPolicy/rg-railgate-guardrail",
      "NetworkPolicy/rg-railgate-speech",
      "PodDisruptionBudget/rg-railgate-gateway",
      "PodDisruptionBudget/rg-railgate-guardrail",
      "PodDisruptionBudget/rg-railgate-speech",
      "Secret/rg-railgate",
      "Service/rg-railgate-gateway",
      "Service/rg-railgate-guardrail",
      "Service/rg-railgate-speech",
    ]);
  });

  it("every object is valid against the Kubernetes API schemas", async () => {
    expect(await allSchemaErrors(plain)).to.deep.equal([]);
  });

  it("with mTLS and the ServiceMonitor on, every object is valid too (the CRD's schema included)", async () => {
    expect(tls.map((o) => o.kind)).to.include("ServiceMonitor");
    expect(await allSchemaErrors(tls)).to.deep.equal([]);
  });

  it("the validation refuses a wrong object: a port that is no integer, a missing container list, an unknown kind", async () => {
    const service = structuredClone(find(plain, "Service", "-gateway"));
    service.spec.ports[0].port = "eighty";
    expect((await schemaErrors(service)).join()).to.match(/ports\/0\/port must be integer/);

    const deployment = structuredClone(find(plain, "Deployment", "-speech"));
    delete deployment.spec.template.spec.containers;
    expect((await schemaErrors(deployment)).join()).to.match(
      /spec\/template\/spec must have required property containers/,
    );

    const monitor = structuredClone(find(tls, "ServiceMonitor", "rg-railgate"));
    monitor.spec.endpoints[0].interval = 30;
    expect((await schemaErrors(monitor)).join()).to.match(/endpoints\/0\/interval must be string/);

    expect(
      await schemaErrors({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } }),
    ).to.deep.equal(["no schema for example.com/v1 Widget"]);
  });

  it("no object has a field the API does not know (strict, as kubectl apply --validate=strict)", () => {
    expect(unknownFieldErrors([...plain, ...tls])).to.deep.equal([]);
  });

  it("the strict check refuses a misspelt field at any depth, and a field of the wrong type", () => {
    const deployment = structuredClone(find(plain, "Deployment", "-gateway"));
    const [gateway] = deployment.spec.template.spec.containers;
    gateway.readinesProbe = gateway.readinessProbe;
    const monitor = structuredClone(find(tls, "ServiceMonitor", "rg-railgate"));
    monitor.spec.endpoints[0].bearerTokenSecrett = {};
    const service = structuredClone(find(plain, "Service", "-speech"));
    service.spec.ports[0].port = "50052";
    const errors = unknownFieldErrors([deployment, monitor, service]);
    expect(errors).to.have.length(3);
    expect(errors[0]).to.match(
      /^Deployment rg-railgate-gateway: .*'"readinesProbe"' does not exist in type 'IContainer'/,
    );
    expect(errors[1]).to.match(
      /^ServiceMonitor rg-railgate: .*'"bearerTokenSecrett"' does not exist/,
    );
    expect(errors[2]).to.match(
      /^Service rg-railgate-speech: Type 'string' is not assignable to type 'number'/,
    );
  });

  it("every setting the chart gives a container is one Railgate reads, and its configuration accepts them", () => {
    for (const objects of [plain, tls]) {
      for (const component of COMPONENTS) {
        const env = containerEnv(objects, component);
        const unknown = Object.keys(env).filter((name) => !KNOWN_VARIABLES.includes(name));
        expect(unknown, `${component}: unknown settings`).to.deep.equal([]);
        const config = loadConfig(env);
        expect(config.grpcHost, component).to.equal("0.0.0.0");
        expect(config.internalToken, component).to.equal(REQUIRED_VALUES.secrets.internalToken);
      }
    }
  });

  it("the gateway finds the services by their Services' names, over TLS when mTLS is on", () => {
    const plainGateway = loadConfig(containerEnv(plain, "gateway"));
    expect(plainGateway.guardrailGrpcUrl).to.equal("http://rg-railgate-guardrail:50051");
    expect(plainGateway.speechGrpcUrl).to.equal("http://rg-railgate-speech:50052");
    expect(plainGateway.http.maxConnectionsPerAddress).to.equal(0);
    const tlsGateway = loadConfig(containerEnv(tls, "gateway"));
    expect(tlsGateway.guardrailGrpcUrl).to.equal("https://rg-railgate-guardrail:50051");
    for (const component of COMPONENTS) {
      const config = loadConfig(containerEnv(tls, component));
      expect(config.grpcTls, component).to.deep.equal({
        certFile: "/etc/railgate/grpc-tls/tls.crt",
        keyFile: "/etc/railgate/grpc-tls/tls.key",
        caFile: "/etc/railgate/grpc-tls/ca.crt",
      });
      const spec = find(tls, "Deployment", `-${component}`).spec.template.spec;
      expect(spec.volumes, component).to.deep.include({
        name: "grpc-tls",
        secret: { secretName: "railgate-grpc-tls" },
      });
    }
  });

  it("the services hold the stores; the gateway holds neither store nor database credential", () => {
    const gateway = containerEnv(plain, "gateway");
    expect(gateway).to.not.have.any.keys("REDIS_URL", "DATABASE_URL", "RAILGATE_MANAGEMENT_KEY");
    for (const component of ["guardrail", "speech"]) {
      const env = containerEnv(plain, component);
      expect(env.REDIS_URL, component).to.equal(REQUIRED_VALUES.redis.url);
      expect(env.DATABASE_URL, component).to.equal(REQUIRED_VALUES.database.url);
    }
    expect(containerEnv(plain, "guardrail").RAILGATE_MANAGEMENT_KEY).to.equal(
      REQUIRED_VALUES.secrets.managementKey,
    );
  });

  it("probes: readiness on /healthz and grpc.health.v1 (a TLS-speaking exec probe under mTLS), liveness on /livez and grpc.health.v1 liveness (the event loop alone)", () => {
    const gateway = container(plain, "gateway");
    expect(gateway.readinessProbe.httpGet).to.deep.equal({ path: "/healthz", port: "global" });
    expect(gateway.livenessProbe.httpGet).to.deep.equal({ path: "/livez", port: "global" });
    for (const [component, port] of [
      ["guardrail", 50051],
      ["speech", 50052],
    ] as const) {
      expect(container(plain, component).readinessProbe.grpc).to.deep.equal({ port, service: "" });
      expect(container(tls, component).readinessProbe.exec.command).to.deep.equal([
        "node",
        "dist/apps/cli/grpc-health.js",
        component,
        `https://localhost:${port}`,
      ]);
      expect(container(plain, component).livenessProbe.grpc).to.deep.equal({
        port,
        service: "liveness",
      });
      expect(container(tls, component).livenessProbe.exec.command).to.deep.equal([
        "node",
        "dist/apps/cli/grpc-health.js",
        component,
        `https://localhost:${port}`,
        "liveness",
      ]);
    }
  });

  it("pods run as non-root on a read-only root file system, without privileges or capabilities", () => {
    for (const component of COMPONENTS) {
      const spec = find(plain, "Deployment", `-${component}`).spec.template.spec;
      expect(spec.securityContext.runAsNonRoot, component).to.equal(true);
      expect(spec.securityContext.runAsUser, component).to.equal(1000);
      expect(spec.automountServiceAccountToken, component).to.equal(false);
      const sc = spec.containers[0].securityContext;
      expect(sc, component).to.deep.include({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      expect(sc.capabilities.drop, component).to.deep.equal(["ALL"]);
      expect(
        spec.topologySpreadConstraints.map((t: { topologyKey: string }) => t.topologyKey),
      ).to.deep.equal(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]);
    }
  });

  it("Services: the three regional listeners; the gRPC ports cluster-internal even when the gateway is a LoadBalancer", async () => {
    const objects = await renderChart(REQUIRED_VALUES, {
      gateway: { service: { type: "LoadBalancer" } },
    });
    const gateway = find(objects, "Service", "-gateway");
    expect(gateway.spec.type).to.equal("LoadBalancer");
    expect(
      gateway.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]),
    ).to.deep.equal([
      ["global", 8080],
      ["europe", 8081],
      ["us", 8082],
    ]);
    for (const component of ["guardrail", "speech"]) {
      expect(find(objects, "Service", `-${component}`).spec.type, component).to.equal("ClusterIP");
    }
  });

  it("NetworkPolicy: the services' gRPC port from this release's gateway only, metrics from the monitoring namespace only", () => {
    for (const component of ["guardrail", "speech"]) {
      const policy = find(plain, "NetworkPolicy", `-${component}`);
      expect(policy.spec.podSelector.matchLabels["app.kubernetes.io/component"]).to.equal(
        component,
      );
      const [grpc, metrics] = policy.spec.ingress;
      expect(grpc.from).to.deep.equal([
        {
          podSelector: {
            matchLabels: {
              "app.kubernetes.io/name": "railgate",
              "app.kubernetes.io/instance": "rg",
              "app.kubernetes.io/component": "gateway",
            },
          },
        },
      ]);
      expect(grpc.ports).to.deep.equal([{ port: "grpc", protocol: "TCP" }]);
      expect(metrics.from[0].namespaceSelector.matchLabels).to.deep.equal({
        "kubernetes.io/metadata.name": "monitoring",
      });
      expect(metrics.ports).to.deep.equal([{ port: "metrics", protocol: "TCP" }]);
    }
  });

  it("autoscaled Deployments leave the replica count to their HPA; the others set it", () => {
    expect(find(plain, "Deployment", "-gateway").spec).to.not.have.property("replicas");
    expect(find(plain, "HorizontalPodAutoscaler", "-gateway").spec.scaleTargetRef.name).to.equal(
      "rg-railgate-gateway",
    );
    expect(find(plain, "Deployment", "-guardrail").spec.replicas).to.equal(2);
  });

  it("the ServiceMonitor scrapes the gateway with the management key and the services' metrics ports", () => {
    const monitor = find(tls, "ServiceMonitor", "rg-railgate");
    expect(monitor.spec.endpoints).to.deep.equal([
      {
        port: "global",
        path: "/metrics",
        interval: "30s",
        authorization: {
          type: "Bearer",
          credentials: { name: "rg-railgate", key: "management-key" },
        },
      },
      { port: "metrics", path: "/metrics", interval: "30s" },
    ]);
  });

  it("the catalog ConfigMap holds deploy/catalog.example.json unless another is given", async () => {
    const example = readFileSync(join(REPO, "deploy/catalog.example.json"), "utf8");
    const data = find(plain, "ConfigMap", "-catalog").data["catalog.json"];
    expect(JSON.parse(data)).to.deep.equal(JSON.parse(example));
    const own = await renderChart(REQUIRED_VALUES, { catalog: { json: '{"models":[]}' } });
    expect(find(own, "ConfigMap", "-catalog").data["catalog.json"].trim()).to.equal(
      '{"models":[]}',
    );
  });

  it("existingSecret: no Secret is rendered and every reference names the operator's", async () => {
    const objects = await renderChart({
      secrets: { existingSecret: "my-railgate" },
      redis: { clusterNodes: "redis-0.redis:6379,redis-1.redis:6379" },
    });
    expect(objects.filter((o) => o.kind === "Secret")).to.deep.equal([]);
    const refs = COMPONENTS.flatMap((c) =>
      (container(objects, c).env as { valueFrom?: { secretKeyRef: { name: string } } }[])
        .filter((e) => e.valueFrom)
        .map((e) => e.valueFrom?.secretKeyRef.name),
    );
    expect(new Set(refs)).to.deep.equal(new Set(["my-railgate"]));
    const speech = containerEnv(objects, "speech");
    expect(speech.RAILGATE_REDIS_CLUSTER_NODES).to.equal("redis-0.redis:6379,redis-1.redis:6379");
    expect(speech).to.not.have.property("REDIS_URL");
    expect(await allSchemaErrors(objects)).to.deep.equal([]);
  });
});

describe("Helm chart: values it refuses", function () {
  this.timeout(60_000);

  const refusal = async (...values: Values[]) => {
    try {
      await renderChart(...values);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error("helm rendered values it should have refused");
  };

  it("no internal token, database or Redis: each is named", async () => {
    expect(await refusal({ ...REQUIRED_VALUES, secrets: {} })).to.match(
      /secrets\.internalToken is required/,
    );
    expect(await refusal({ ...REQUIRED_VALUES, database: {} })).to.match(
      /database\.url is required/,
    );
    expect(await refusal({ ...REQUIRED_VALUES, redis: {} })).to.match(
      /redis\.url or redis\.clusterNodes is required/,
    );
    expect(await refusal(REQUIRED_VALUES, { redis: { clusterNodes: "r-0:6379" } })).to.match(
      /cannot both be set/,
    );
  });

  it("a port that is no integer, an unknown value, a short token, mTLS without its Secret", async () => {
    expect(await refusal(REQUIRED_VALUES, { gateway: { ports: { global: "http" } } })).to.match(
      /gateway\/ports\/global.*want integer/,
    );
    expect(await refusal(REQUIRED_VALUES, { gateway: { replcas: 3 } })).to.match(
      /additional properties 'replcas' not allowed/,
    );
    expect(await refusal(REQUIRED_VALUES, { secrets: { internalToken: "short" } })).to.match(
      /secrets\/internalToken/,
    );
    expect(await refusal(REQUIRED_VALUES, { grpcTls: { enabled: true } })).to.match(
      /grpcTls\.secretName is required/,
    );
  });
});
