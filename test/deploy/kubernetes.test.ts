// Every Kubernetes manifest in deploy/ against the Kubernetes API schemas (kubernetes-models, offline),
// and the check itself against manifests that must fail: a wrong type, a missing required field, an
// unknown kind, broken YAML.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { checkManifests } from "../../scripts/check-manifests.ts";

const deploy = fileURLToPath(new URL("../../deploy", import.meta.url));

describe("deploy/ Kubernetes manifests", () => {
  it("every manifest is valid against the Kubernetes schemas", async () => {
    const { checked, problems } = await checkManifests(deploy);
    assert.deepEqual(problems, []);
    assert.ok(checked >= 4, `only ${checked} manifests found`);
  });

  it("the check fails on bad manifests, naming file, document and field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wasmcell-k8s-"));
    try {
      writeFileSync(
        join(dir, "bad.yaml"),
        [
          "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\nspec: { replicas: three, selector: {}, template: {} }",
          "apiVersion: v1\nkind: Service\nmetadata: { name: x }\nspec: { ports: [{ name: http }] }",
          "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: { name: x }",
          "apiVersion: ../../../etc\nkind: Passwd",
        ].join("\n---\n"),
      );
      writeFileSync(join(dir, "broken.yml"), "a: [1, 2\n");
      const { problems } = await checkManifests(dir);
      const lines = problems.map((p) => `${p.file.split("/").pop()}#${p.document}: ${p.message}`);
      assert.equal(lines.length, 5, lines.join("\n"));
      assert.match(lines[0]!, /^bad\.yaml#1: apps\/v1 Deployment: .*replicas must be integer/);
      assert.match(lines[1]!, /^bad\.yaml#2: v1 Service: .*port/);
      assert.match(lines[2]!, /^bad\.yaml#3: no Kubernetes schema for apps\/v1 Deploymnet/);
      assert.match(lines[3]!, /^bad\.yaml#4: .* is not an apiVersion and kind/);
      assert.match(lines[4]!, /^broken\.yml#1: not YAML/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
