// An agent's graph drawn as inline SVG: nodes in columns by their distance from the start (breadth first), edges as
// arrows labelled with their transition name. Nodes no path reaches (global, webhook, trigger) get a last column.
import { s } from "./core.js";

const W = 150;
const H = 44;
const GAP_X = 70;
const GAP_Y = 26;

/** Column of each node id: its step count from a startCall node; unreachable nodes after the last column. */
export function layers(nodes, edges) {
  const out = new Map();
  const next = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges) next.get(e.source)?.push(e.target);
  const queue = nodes.filter((n) => n.type === "startCall").map((n) => n.id);
  for (const id of queue) out.set(id, 0);
  while (queue.length) {
    const id = queue.shift();
    for (const t of next.get(id) ?? []) {
      if (out.has(t) || !next.has(t)) continue;
      out.set(t, out.get(id) + 1);
      queue.push(t);
    }
  }
  const last = Math.max(-1, ...out.values()) + 1;
  for (const n of nodes) if (!out.has(n.id)) out.set(n.id, last);
  return out;
}

export function graphSvg(nodes, edges) {
  const col = layers(nodes, edges);
  const rows = new Map();
  const at = new Map();
  for (const n of nodes) {
    const c = col.get(n.id);
    const r = rows.get(c) ?? 0;
    rows.set(c, r + 1);
    at.set(n.id, { x: 10 + c * (W + GAP_X), y: 10 + r * (H + GAP_Y) });
  }
  const width = 20 + Math.max(1, ...[...col.values()].map((c) => c + 1)) * (W + GAP_X);
  const height = 20 + Math.max(1, ...rows.values()) * (H + GAP_Y);
  const label = `Diagram of the agent's graph: ${nodes.length} steps, ${edges.length} transitions`;
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": label, id: "agent-diagram" });
  svg.append(
    s("title", {}, label),
    s(
      "defs",
      {},
      s(
        "marker",
        { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto" },
        s("path", { d: "M0,0 L10,5 L0,10 z", fill: "#4a5562" }),
      ),
    ),
  );
  for (const e of edges) {
    const a = at.get(e.source);
    const b = at.get(e.target);
    if (!a || !b) continue;
    const x1 = a.x + W;
    const y1 = a.y + H / 2;
    const back = b.x <= a.x;
    const x2 = back ? b.x + W / 2 : b.x;
    const y2 = back ? b.y + H : b.y + H / 2;
    svg.append(s("line", { x1, y1, x2, y2, stroke: "#4a5562", "stroke-width": 1.5, "marker-end": "url(#arrow)" }));
    const text = e.data?.label || e.data?.condition || "";
    if (text) svg.append(s("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle", "font-size": 11, fill: "#1b1f24" }, text.slice(0, 24)));
  }
  for (const n of nodes) {
    const { x, y } = at.get(n.id);
    const fill = n.type === "startCall" ? "#e3eefc" : n.type === "endCall" ? "#e6f4ea" : "#f4f6f8";
    svg.append(
      s("rect", { x, y, width: W, height: H, rx: 6, fill, stroke: "#4a5562" }),
      s("text", { x: x + 8, y: y + 18, "font-size": 13, "font-weight": 700, fill: "#1b1f24" }, String(n.id).slice(0, 20)),
      s("text", { x: x + 8, y: y + 35, "font-size": 11, fill: "#4a5562" }, n.type ?? "?"),
    );
  }
  return svg;
}
