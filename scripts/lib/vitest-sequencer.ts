// Test files in order of how long they took (longest first), so a long file never starts last and holds the run's
// end alone: on 2 cores with 3 workers the tail was the agent-test suites (65 s) starting 200th of 241.
// The durations are those of this machine's last run (vitest's cache) where it has them, else the committed table
// test/durations.json (a clean clone, CI), else unknown: run first, as vitest does (a new file may be long).
// `UPDATE_TEST_DURATIONS=1 npm test` rewrites the table (scripts/lib/vitest-progress.mjs).
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

export const DURATIONS_FILE = "test/durations.json";

const PROJECTS = ["workers-fresh", "unit", "workers"];
/** A project's place in the run; one not named here (the slow suite's, a new one) goes last. */
function projectOrder(name: string): number {
  const i = PROJECTS.indexOf(name);
  return i < 0 ? PROJECTS.length : i;
}

function committed(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, "utf8"));
  } catch {
    return {};
  }
}

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const table = committed();
    const cache = this.ctx.cache;
    const duration = (spec: TestSpecification): number =>
      cache.getTestSpecificationResult(spec)?.duration ?? table[relative(process.cwd(), spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => {
      // Projects in this order: the files that need a runtime of their own first, so it boots and they run while the
      // pure modules' files (seconds in all) take the other workers; at the end it was 13 s of boot with nothing else.
      if (a.project.name !== b.project.name) return projectOrder(a.project.name) - projectOrder(b.project.name);
      const [da, db] = [duration(a), duration(b)];
      return da === db ? 0 : db > da ? 1 : -1;
    });
  }
}
