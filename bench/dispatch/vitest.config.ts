// The in-process half of bench/dispatch: the project's Workers pool (its bindings and setup, which applies the D1
// migrations before the file as before every test file), running only the bench file. The base config's projects are
// narrowed to its workers project: a top-level `include` beside `projects` is not read, so the whole suite ran.
import { fileURLToPath } from "node:url";
import type { ViteUserConfig as UserConfig } from "vitest/config";
import base from "../../vitest.config";

const ROOT = fileURLToPath(new URL("../../", import.meta.url).href);

export default async (env: never) => {
  const cfg = (await (base as unknown as (e: never) => Promise<UserConfig>)(env)) as UserConfig;
  const projects = (cfg.test?.projects ?? []) as Array<{ test?: Record<string, unknown> }>;
  const workers = projects.find((p) => p.test?.name === "workers");
  if (!workers?.test) throw new Error("bench/dispatch: the base config has no workers project");
  workers.test = { ...workers.test, include: ["bench/dispatch/object.bench.test.ts"], exclude: [], testTimeout: 600_000 };
  return { ...cfg, root: ROOT, test: { ...cfg.test, projects: [workers] } };
};
