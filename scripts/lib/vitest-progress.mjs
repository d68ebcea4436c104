// A vitest reporter for scripts/vitest-bounded.mjs: one line per event (a test file started or ended, the run ended)
// appended to the file named by VITEST_PROGRESS_FILE, so the runner outside the process can tell a run that ended
// from one that is still working, and name the files that never finished.
import { appendFileSync } from "node:fs";
import { relative } from "node:path";

const out = process.env.VITEST_PROGRESS_FILE;
const write = (line) => out && appendFileSync(out, `${line}\n`);
const name = (m) => relative(process.cwd(), m.moduleId);

export default class ProgressReporter {
  onTestRunStart(specifications) {
    write(`files ${new Set(specifications.map((s) => s.moduleId)).size}`);
  }
  onTestModuleStart(m) {
    write(`start ${name(m)}`);
  }
  onTestModuleEnd(m) {
    write(`end ${name(m)} ${m.state()}`);
  }
  onTestRunEnd(_modules, unhandledErrors, reason) {
    write(`run ${reason} ${unhandledErrors.length}`);
  }
}
