// bench/scale in the project's Workers test pool (its bindings, the carrier simulator), running only the bench file.
import { fileURLToPath } from "node:url";
import type { ViteUserConfig as UserConfig } from "vitest/config";
import base from "../../vitest.config";

const ROOT = fileURLToPath(new URL("../../", import.meta.url).href);

export default async (env: never) => {
  const cfg = (await (base as unknown as (e: never) => Promise<UserConfig>)(env)) as UserConfig;
  const projects = (cfg.test?.projects ?? []) as Array<{ test?: Record<string, unknown> }>;
  const workers = projects.find((p) => p.test?.name === "workers");
  if (!workers?.test) throw new Error("bench/scale: the base config has no workers project");
  // The run's size from the runner's environment (BENCH_CALLS calls, BENCH_PARALLEL at a time), read with inject().
  const provide = { benchCalls: Number(process.env.BENCH_CALLS ?? 12), benchParallel: Number(process.env.BENCH_PARALLEL ?? 4) };
  workers.test = { ...workers.test, include: ["bench/scale/scale.bench.test.ts"], exclude: [], testTimeout: 900_000, provide };
  return { ...cfg, root: ROOT, test: { ...cfg.test, projects: [workers] } };
};
