// Validates every Kubernetes manifest under a folder (default deploy/) against the Kubernetes API
// schemas bundled in the `kubernetes-models` package: offline, no cluster. Checked: each document's
// apiVersion/kind is a known built-in type, and its fields have the schema's types, formats, enums and
// required keys. Not checked: unknown keys (the bundled schemas allow additional properties, as the
// API server does without --validate=strict), and custom resources (no schema to check against).
// Usage: node scripts/check-manifests.ts [DIR]   (exit 1 and one line per problem)

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export interface ManifestProblem {
  file: string;
  document: number;
  message: string;
}

export async function checkManifests(dir: string): Promise<{ checked: number; problems: ManifestProblem[] }> {
  const problems: ManifestProblem[] = [];
  let checked = 0;
  for (const file of yamlFiles(dir)) {
    const docs = parseAllDocuments(readFileSync(file, "utf8"));
    for (const [i, doc] of docs.entries()) {
      const at = { file: relative(process.cwd(), file), document: i + 1 };
      if (doc.errors.length > 0) {
        problems.push({ ...at, message: `not YAML: ${doc.errors[0]!.message}` });
        continue;
      }
      const object = doc.toJS() as unknown;
      if (object === null || object === undefined) continue;
      checked++;
      const problem = await checkObject(object);
      if (problem) problems.push({ ...at, message: problem });
    }
  }
  return { checked, problems };
}

async function checkObject(object: unknown): Promise<string | undefined> {
  if (typeof object !== "object" || Array.isArray(object)) return "a manifest must be a mapping";
  const { apiVersion, kind } = object as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== "string" || typeof kind !== "string") return "apiVersion and kind are required strings";
  // The module path is built from the manifest's own text: only names of the package's shape are
  // looked up ("apps/v1/Deployment", "v1/Service"), so a manifest cannot name another module.
  if (!/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(apiVersion) || !/^[A-Z][A-Za-z0-9]{0,62}$/.test(kind))
    return `"${apiVersion}" "${kind}" is not an apiVersion and kind`;
  let Model: new (data: unknown) => { validate(): void };
  try {
    const mod = (await import(`kubernetes-models/${apiVersion}/${kind}`)) as Record<string, typeof Model>;
    Model = mod[kind]!;
  } catch {
    return `no Kubernetes schema for ${apiVersion} ${kind} (a typo, or a custom resource)`;
  }
  try {
    new Model(object).validate();
  } catch (error) {
    return `${apiVersion} ${kind}: ${(error as Error).message}`;
  }
  return undefined;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? "deploy";
  const { checked, problems } = await checkManifests(dir);
  for (const p of problems) console.error(`${p.file} (document ${p.document}): ${p.message}`);
  console.log(`${checked} Kubernetes manifests under ${dir}: ${problems.length} problems`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
