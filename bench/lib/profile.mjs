// A CPU profile of a Worker's isolate through wrangler's inspector (the V8 protocol), and a summary of it: where the
// isolate's time went by function, with the garbage collector's share and its longest runs.
import { writeFileSync } from "node:fs";
import WebSocket from "ws";

/** Connects to `workerName`'s isolate; start() and stop() bracket what is profiled (stop answers the profile). */
export async function cpuProfiler(inspectorUrl, workerName) {
  const ws = new WebSocket(new URL(`/core:user:${workerName}`, inspectorUrl.href.replace(/^http/, "ws")).href);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let seq = 0;
  const pending = new Map();
  let chunks = [];
  ws.on("message", (data) => {
    const m = JSON.parse(String(data));
    if (m.method === "HeapProfiler.addHeapSnapshotChunk") chunks.push(m.params.chunk);
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      pending.set(++seq, resolve);
      ws.send(JSON.stringify({ id: seq, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  await send("HeapProfiler.enable");
  return {
    start: async () => {
      await send("Profiler.start");
      await send("HeapProfiler.startSampling", { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    },
    stop: async () => {
      const allocations = (await send("HeapProfiler.stopSampling")).result.profile;
      return { ...(await send("Profiler.stop")).result.profile, allocations };
    },
    /** The isolate's heap in use and its size, in MB. */
    heap: async () => {
      const { usedSize, totalSize } = (await send("Runtime.getHeapUsage")).result;
      return { usedMB: Math.round(usedSize / 1e6), totalMB: Math.round(totalSize / 1e6) };
    },
    /** A heap snapshot's live objects summed by constructor (what a major collection has to mark). */
    snapshot: async () => {
      chunks = [];
      await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      return snapshotSummary(JSON.parse(chunks.join("")));
    },
    close: () => ws.close(),
  };
}

/** Prints the busiest functions by self time, the garbage collector's total and its longest unbroken runs. */
export function profileSummary(profile, path) {
  writeFileSync(path, JSON.stringify(profile));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let busy = 0;
  let gc = 0;
  const gcRuns = [];
  let run = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i]).callFrame;
    const dt = profile.timeDeltas[i + 1] ?? 0; // the time until the next sample is this sample's
    if (frame.functionName === "(garbage collector)") {
      gc += dt;
      run += dt;
    } else if (run) {
      gcRuns.push(run);
      run = 0;
    }
    if (frame.functionName === "(idle)" || frame.functionName === "(program)") continue;
    busy += dt;
    const file = (frame.url || "").replace(/^.*\/(node_modules\/[^/]+)\/.*$/, "$1").replace(/^.*\/(src|bench)\//, "$1/");
    const key = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  if (run) gcRuns.push(run);
  const ms = (us) => (us / 1000).toFixed(1);
  gcRuns.sort((a, b) => b - a);
  console.log(
    `  profile                   ${path}: isolate busy ${ms(busy)} ms, garbage collector ${ms(gc)} ms, its longest runs ${gcRuns.slice(0, 8).map(ms).join(", ")} ms`,
  );
  for (const [key, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`    ${ms(t).padStart(8)} ms  ${key}`);
  if (profile.allocations) allocationSummary(profile.allocations);
}

/** The sampled allocations by function (where the garbage collector's work comes from). */
function allocationSummary(sampled) {
  const by = new Map();
  let total = 0;
  const walk = (node, path) => {
    const f = node.callFrame;
    const here = `${f.functionName || "(anonymous)"} ${(f.url || "").replace(/^.*\//, "")}:${f.lineNumber + 1}`;
    const size = node.selfSize ?? 0;
    if (size) {
      const key = `${here} < ${path.slice(-2).reverse().join(" < ")}`;
      by.set(key, (by.get(key) ?? 0) + size);
      total += size;
    }
    for (const c of node.children ?? []) walk(c, [...path, here]);
  };
  walk(sampled.head, []);
  console.log(`  allocations (sampled)     ${(total / 1e6).toFixed(0)} MB in all; the largest:`);
  for (const [key, size] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`    ${(size / 1e6).toFixed(1).padStart(7)} MB  ${key}`);
}

/** The largest kinds of live objects in a heap snapshot (V8's format: a flat array of nodes, their fields in meta). */
function snapshotSummary({ snapshot, nodes, strings }) {
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const by = new Map();
  let total = 0;
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + typeAt]];
    const key = type === "object" || type === "closure" ? `${type} ${strings[nodes[i + nameAt]].slice(0, 60)}` : type;
    const size = nodes[i + sizeAt];
    const entry = by.get(key) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += size;
    by.set(key, entry);
    total += size;
  }
  return { totalMB: total / 1e6, largest: [...by].sort((a, b) => b[1].size - a[1].size).slice(0, 25) };
}
