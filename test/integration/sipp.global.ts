// Global setup of the integration suite (Node): a sipp UAS on 127.0.0.1:5070 (test/integration/uas-ring.xml), the `sipp` endpoint of the
// peers' pjsip.conf, for ARI calls over PJSIP. Started here (and stopped by its PID) unless one already runs.
import { spawn, spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

export default function setup(project: TestProject) {
  const hasSipp = spawnSync("sipp", ["-v"], { stdio: "ignore" }).error === undefined;
  project.provide("sipp", hasSipp);
  if (!hasSipp) {
    console.log("integration: SKIPPED the PJSIP-to-sipp test: no `sipp` on PATH");
    return;
  }
  // Our scenario: it rings 1.5 s (time for a test to prepare the call's session), then answers.
  const scenario = `${dirname(fileURLToPath(import.meta.url))}/uas-ring.xml`;
  const uas = spawn("sipp", ["-sf", scenario, "-p", "5070", "-i", "127.0.0.1", "-mi", "127.0.0.1", "-nostdin"], {
    stdio: "ignore",
    detached: true,
  });
  uas.unref();
  return () => {
    if (uas.pid) process.kill(uas.pid);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    sipp: boolean;
  }
}
