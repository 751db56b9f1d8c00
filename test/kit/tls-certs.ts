import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  dir: string;
  /** CA that signs the services' and the gateways' certificates. */
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  gatewayCertFile: string;
  gatewayKeyFile: string;
  /** A client certificate from another CA: must prove nothing. */
  rogueCertFile: string;
  rogueKeyFile: string;
  read(file: string): Buffer;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

function issue(dir: string, name: string, ca: string, subject: string, ext?: string): void {
  openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    subject,
  ]);
  const args = [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.crt`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "2",
  ];
  if (ext) {
    writeFileSync(join(dir, `${name}.ext`), ext);
    args.push("-extfile", `${name}.ext`);
  }
  openssl(dir, args);
}

/** A throwaway PKI made with the openssl command line, in a temporary folder. */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "railgate-pki-"));
  for (const ca of ["ca", "rogue-ca"]) {
    openssl(dir, [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${ca}.key`,
      "-out",
      `${ca}.crt`,
      "-days",
      "2",
      "-subj",
      `/CN=${ca}`,
    ]);
  }
  issue(dir, "server", "ca", "/CN=railgate-service", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  issue(dir, "gateway", "ca", "/CN=railgate-gateway", "extendedKeyUsage=clientAuth\n");
  issue(dir, "rogue", "rogue-ca", "/CN=railgate-gateway", "extendedKeyUsage=clientAuth\n");
  return {
    dir,
    caFile: join(dir, "ca.crt"),
    serverCertFile: join(dir, "server.crt"),
    serverKeyFile: join(dir, "server.key"),
    gatewayCertFile: join(dir, "gateway.crt"),
    gatewayKeyFile: join(dir, "gateway.key"),
    rogueCertFile: join(dir, "rogue.crt"),
    rogueKeyFile: join(dir, "rogue.key"),
    read: (file) => readFileSync(file),
  };
}
