// BENCH_GC=1: every isolate's garbage collections in the local runtime, from V8's own trace (--trace-gc-nvp, one JSON
// line per collection), stamped with the wall clock so that they can be set beside a run's events. workerd runs
// every isolate of the dev server on one thread: a collection anywhere stalls everything.
import { readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const WRAPPER = fileURLToPath(new URL("./workerd-gc-trace.sh", import.meta.url));

/** Call before the dev server starts: routes workerd through the tracing wrapper, its lines to `log`. */
export function traceGc(log) {
  rmSync(log, { force: true });
  process.env.BENCH_GC_LOG = log;
  process.env.MINIFLARE_WORKERD_PATH = WRAPPER;
  process.env.MINIFLARE_WORKERD_V8_FLAGS = "--trace-gc-nvp";
}

/** The collections stamped between `from` and `to` (epoch ms): { at, isolate, kind: "minor" | "major", pause, ... }. */
export function gcEvents(log, from = 0, to = Infinity) {
  const out = [];
  for (const line of readFileSync(log, "utf8").split("\n")) {
    const m = /^(\d+) \[\d+:(0x[0-9a-f]+):\d+\]\s+\d+ ms: GC: (\{.*\})$/.exec(line);
    if (!m || Number(m[1]) < from || Number(m[1]) > to) continue;
    const e = JSON.parse(m[3]);
    out.push({
      at: Number(m[1]),
      isolate: m[2],
      kind: e.gc === "s" ? "minor" : "major",
      pause: e.pause,
      afterMB: e.end_object_size / 1e6,
      promotedMB: (e.promoted ?? 0) / 1e6,
      newSpaceMB: (e.new_space_capacity ?? 0) / 1e6,
    });
  }
  return out;
}

/** One line per isolate that collected during the span: minor and major collections, their pauses, what survived. */
export function gcSummary(events) {
  const by = new Map();
  for (const e of events) by.set(e.isolate, [...(by.get(e.isolate) ?? []), e]);
  const ms = (xs) =>
    xs.length ? `${xs.reduce((a, e) => a + e.pause, 0).toFixed(0)} ms in all, longest ${Math.max(...xs.map((e) => e.pause)).toFixed(0)} ms` : "none";
  return [...by]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([isolate, xs]) => {
      const minor = xs.filter((e) => e.kind === "minor");
      const major = xs.filter((e) => e.kind === "major");
      const live = major.length
        ? `, live after each ${Math.min(...major.map((e) => e.afterMB)).toFixed(1)}-${Math.max(...major.map((e) => e.afterMB)).toFixed(1)} MB`
        : "";
      const promoted = minor.reduce((a, e) => a + e.promotedMB, 0);
      return `isolate ${isolate.slice(-6)}: ${minor.length} minor (${ms(minor)}; ${promoted.toFixed(1)} MB promoted, new space up to ${Math.max(0, ...minor.map((e) => e.newSpaceMB)).toFixed(1)} MB), ${major.length} major (${ms(major)}${live})`;
    });
}
