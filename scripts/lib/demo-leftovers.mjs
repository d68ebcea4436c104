// The local servers a demo run starts (workerd processes, children of the demo's Node process) outlive a demo that is
// killed (SIGKILL, a closed terminal): they keep its storage open and its campaign dialing. A run notes their process
// ids in its storage; the next run on that storage stops the ones still running before it opens the storage itself.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";

/** A running process's start time and command (the pair tells it from a later process given the same id), or null. */
function processOf(pid) {
  try {
    const ps = (field) => execFileSync("ps", ["-o", `${field}=`, "-p", String(pid)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return { pid, started: ps("lstart"), command: ps("command") };
  } catch {
    return null;
  }
}

/** Notes the demo's own workerd children in `file` (none where `pgrep` is missing: then nothing is noted). */
export function noteServers(file) {
  let servers = [];
  try {
    servers = execFileSync("pgrep", ["-P", String(process.pid)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .split(/\s+/)
      .filter(Boolean)
      .map((pid) => processOf(Number(pid)))
      .filter((p) => p && /workerd/.test(p.command))
      .map(({ pid, started }) => ({ pid, started }));
  } catch {
    // no children, or no pgrep
  }
  writeFileSync(file, JSON.stringify({ servers }), { mode: 0o600 });
}

/** Stops the servers a killed run left (the same processes: a reused process id is left alone); how many. */
export function stopLeftoverServers(file) {
  if (!existsSync(file)) return 0;
  let stopped = 0;
  for (const { pid, started } of JSON.parse(readFileSync(file, "utf8")).servers ?? []) {
    const now = processOf(pid);
    if (!now || now.started !== started || !/workerd/.test(now.command)) continue;
    try {
      process.kill(pid, "SIGKILL");
      stopped++;
    } catch {
      // already gone
    }
  }
  rmSync(file, { force: true });
  return stopped;
}

/** A run that ends as it should stopped its servers itself: nothing to note. */
export const forgetServers = (file) => rmSync(file, { force: true });
