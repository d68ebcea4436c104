// What both benchmarks share: CPU accounting of the local runtime (from /proc) and the dev-server options.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

// wrangler's dev server streams every invocation's events (each RPC, each storage call) to a local observability
// collector: another isolate on workerd's one thread, whose garbage collections (88-126 ms, every second or two under
// a burst) stalled edgedial's isolate; it took about three quarters of the runtime's CPU in bench:dispatch. A dev-server
// tool, not part of the Worker or of the deployed runtime, so the benchmarks run without it, as they run with
// the Worker's own `observability` off. X_LOCAL_OBSERVABILITY=true puts it back.
process.env.X_LOCAL_OBSERVABILITY ??= "false";

/** User + system CPU seconds used so far by `pids` (fields 14 and 15 of /proc/<pid>/stat, in clock ticks). */
export function cpuOf(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/** Every process under `root` (wrangler runs workerd a level or two below itself). */
export function descendants(root) {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const out = [];
  const walk = (pid) => {
    for (const r of rows.filter((x) => x.ppid === pid)) {
      out.push(r);
      walk(r.pid);
    }
  };
  walk(root);
  return out;
}

/** unstable_startWorker options shared by the benchmarks: throwaway secrets, no inspector (an attached one
 *  slows the isolate several times over), local state under `persist`. */
export function benchWorkerOptions(persist, extraBindings = {}) {
  const values = {
    ...localBindings("b1"),
    // Benchmarks run at any hour and dial the same numbers again and again: the calling rules' defaults (local
    // hours, the attempt cap) would hold them.
    CALLING_RULES_DEFAULTS: "off",
    ...extraBindings,
  };
  return {
    build: { bundle: false },
    bindings: Object.fromEntries(Object.entries(values).map(([k, value]) => [k, { type: "plain_text", value }])),
    // remote: false: no remote bindings (Workers AI, which has no local simulation, would need a login).
    dev: { inspector: false, server: { hostname: "127.0.0.1", port: 0 }, persist, watch: false, logLevel: "warn", remote: false },
  };
}
