// A vitest reporter for scripts/vitest-bounded.mjs: one line per event (a test file started or ended, the run ended)
// appended to the file named by VITEST_PROGRESS_FILE, so the runner outside the process can tell a run that ended
// from one that is still working, and name the files that never finished.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const out = process.env.VITEST_PROGRESS_FILE;
const write = (line) => out && appendFileSync(out, `${line}\n`);
const name = (m) => relative(process.cwd(), m.moduleId);
/** With VITEST_TIMELINE=<file>, each file's start and end with the time (ms), to see what holds a run's wall time. */
const timeline = process.env.VITEST_TIMELINE;
const mark = (kind, m) => timeline && appendFileSync(timeline, `${Date.now()} ${kind} ${name(m)}\n`);

/** With UPDATE_TEST_DURATIONS=1, each file's duration (to 100 ms) goes into the sequencer's table (vitest-sequencer.ts). */
const DURATIONS = process.env.UPDATE_TEST_DURATIONS === "1" ? "test/durations.json" : null;

export default class ProgressReporter {
  durations = {};
  onTestRunStart(specifications) {
    write(`files ${new Set(specifications.map((s) => s.moduleId)).size}`);
  }
  onTestModuleStart(m) {
    write(`start ${name(m)}`);
    mark("start", m);
  }
  onTestModuleEnd(m) {
    write(`end ${name(m)} ${m.state()}`);
    mark("end", m);
    if (DURATIONS) this.durations[name(m)] = Math.round(m.diagnostic().duration / 100) * 100;
    // Why each test failed, as the file ends: vitest prints its own account only once the pool has closed, and a pool
    // that never closes (the runner then stops it) would take that account with it.
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state !== "failed") continue;
      const why = (r.errors ?? [])
        .map((e) =>
          String(e.stack ?? e.message)
            .split("\n")
            .slice(0, 6)
            .join("\n"),
        )
        .join("\n");
      process.stdout.write(`\nFAILED ${name(m)} > ${t.fullName}\n${why}\n\n`);
    }
  }
  onTestRunEnd(_modules, unhandledErrors, reason) {
    write(`run ${reason} ${unhandledErrors.length}`);
    if (!DURATIONS) return;
    let table = {};
    try {
      table = JSON.parse(readFileSync(DURATIONS, "utf8"));
    } catch {}
    const merged = { ...table, ...this.durations };
    const sorted = Object.fromEntries(
      Object.keys(merged)
        .sort()
        .map((k) => [k, merged[k]]),
    );
    writeFileSync(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
