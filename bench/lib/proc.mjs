// Process accounting for the benchmarks: CPU seconds of the local runtime's processes, read from /proc.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

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
