import { join } from "node:path";
import ts from "typescript";
import { type K8sObject, REPO } from "./helm-render.js";
import { modulePath } from "./k8s-schemas.js";

/**
 * Unknown fields, refused as `kubectl apply --validate=strict` would: the API's schemas allow
 * extra properties, so a misspelt field (`readinesProbe`) passes them and is silently dropped by
 * the API server. The same packages carry a TypeScript interface per object; each object is
 * type-checked as an object literal of its interface, whose excess-property check names every
 * field the API does not know, at any depth.
 */
export function unknownFieldErrors(objects: K8sObject[]): string[] {
  // Next to the repository's node_modules, so the packages resolve as they do for the tests.
  const file = join(REPO, "k8s-objects.check.ts");
  const source = objects
    .map((o, i) => {
      const path = modulePath(o.apiVersion, o.kind);
      return `import type { I${o.kind} as T${i} } from ${JSON.stringify(path)};\nexport const o${i}: T${i} = ${JSON.stringify(o)};\n`;
    })
    .join("");
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, version)
      : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const checked = program.getSourceFile(file);
  return ts.getPreEmitDiagnostics(program, checked).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, " ");
    // The object it concerns: the declaration the error sits in.
    const line = d.file && d.start !== undefined ? source.slice(0, d.start).split("\n").length : 0;
    const index = Math.floor((line - 1) / 2);
    const o = objects[index];
    return o ? `${o.kind} ${o.metadata?.name}: ${text}` : text;
  });
}
