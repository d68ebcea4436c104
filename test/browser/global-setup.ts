// The browser suite's one D1 migration: `wrangler d1 migrations apply --local` takes about 25 s of CPU here (more on a
// busy CI machine, where six files doing it each were most of a 180 s setup), so it runs once into a template that each
// file copies (local-service.ts, localOrganization).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain JavaScript helper of the local scripts (no type declarations)
import { wrangler } from "../../scripts/lib/wrangler.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    migratedState: string;
  }
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "edgedial-migrated-"));
  const started = Date.now();
  wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", dir], { quiet: true, timeoutMs: 240_000 });
  process.stderr.write(`browser setup: D1 migrated once, for every file, in ${Date.now() - started} ms\n`);
  project.provide("migratedState", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
