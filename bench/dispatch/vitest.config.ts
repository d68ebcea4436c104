// The in-process half of bench/dispatch: the project's Workers test pool, running only the bench file.
import { fileURLToPath } from "node:url";
import type { UserConfig } from "vitest/config";
import base from "../../vitest.config";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export default async (env: never) => {
  const cfg = (await (base as unknown as (e: never) => Promise<UserConfig>)(env)) as UserConfig;
  return { ...cfg, root: ROOT, test: { ...cfg.test, include: ["bench/dispatch/object.bench.test.ts"], exclude: [], testTimeout: 600_000 } };
};
