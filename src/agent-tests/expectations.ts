// Judging one test call against its scenario's expectations: pure, over what the call left on its run (transcript,
// nodes, gathered values, the agent's actions, transfer, disposition, end reason, analysis). Every expectation gives
// pass or fail with the evidence a person needs to see why: what was expected, what happened, and a transcript
// excerpt or timing where one says more.
import type { Expectations } from "./schemas";

export type ObservedTurn = { role: string; text: string; start_ms: number; end_ms: number; interrupted?: boolean };
export type ObservedAction = { name: string; arguments: Record<string, unknown>; status?: string };

export type Observed = {
  transcript: ObservedTurn[];
  nodes: string[];
  gathered: Record<string, unknown>;
  actions: ObservedAction[];
  transfer: { destination?: string; mode?: string } | null;
  /** Keys the agent sent (its send_dtmf actions, joined). */
  dtmf: string;
  disposition: string | null;
  endReason: string | null;
  /** The analysis' structured data, when the agent defines one and it ran. */
  analysis: Record<string, unknown> | null;
  /** The model's verdict on each rubric criterion, when a judge ran. */
  rubric?: Array<{ criterion: string; passed: boolean; reasoning: string }>;
};

export type Verdict = { expectation: string; passed: boolean; expected: unknown; actual: unknown; evidence: string };

const lower = (s: string) => s.toLowerCase();

/** Whether `actual` has every field of `expected` with an equal value (numbers loosely: "12" is 12). */
export function matchesPartially(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== "object") {
    if (typeof expected === "number" || typeof actual === "number") return Number(expected) === Number(actual) && actual !== null && actual !== "";
    if (typeof expected === "string" && typeof actual === "string") return lower(expected.trim()) === lower(actual.trim());
    return expected === actual;
  }
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.length === actual.length && expected.every((e, i) => matchesPartially(e, actual[i]));
  if (actual === null || typeof actual !== "object") return false;
  return Object.entries(expected).every(([k, v]) => matchesPartially(v, (actual as Record<string, unknown>)[k]));
}

/** Whether `wanted` appear in `seen` in order (not necessarily next to each other). */
function inOrder(wanted: string[], seen: string[]): boolean {
  let at = 0;
  for (const s of seen) if (s === wanted[at]) at++;
  return at === wanted.length;
}

/** The transcript as evidence: the turns around the one that matters, "role: text" each, short. */
export function excerpt(turns: ObservedTurn[], around?: number, span = 2): string {
  if (!turns.length) return "(no transcript)";
  const at = around ?? turns.length - 1;
  return turns
    .slice(Math.max(0, at - span), at + span + 1)
    .map((t) => `${t.role}@${t.start_ms}ms: ${t.text.length > 160 ? `${t.text.slice(0, 160)}…` : t.text}`)
    .join(" | ");
}

/**
 * How long the agent took to answer each of the caller's turns: from the end of the caller's turn to the start of the
 * agent's next turn (as heard, on the call's clock), with the caller turn's index.
 */
export function answerLatencies(turns: ObservedTurn[]): Array<{ index: number; ms: number }> {
  const out: Array<{ index: number; ms: number }> = [];
  turns.forEach((t, i) => {
    if (t.role === "agent") return;
    const reply = turns.slice(i + 1).find((n) => n.role === "agent");
    if (reply && turns.slice(i + 1, turns.indexOf(reply)).every((n) => n.role === "agent")) out.push({ index: i, ms: Math.max(0, reply.start_ms - t.end_ms) });
  });
  return out;
}

export function evaluate(x: Expectations, o: Observed): Verdict[] {
  const out: Verdict[] = [];
  const add = (expectation: string, passed: boolean, expected: unknown, actual: unknown, evidence: string) =>
    out.push({ expectation, passed, expected, actual, evidence });

  if (x.nodes_reached) {
    const { nodes, in_order } = x.nodes_reached;
    const passed = in_order ? inOrder(nodes, o.nodes) : nodes.every((n) => o.nodes.includes(n));
    const missing = nodes.filter((n) => !o.nodes.includes(n));
    add(
      "nodes_reached",
      passed,
      nodes,
      o.nodes,
      passed
        ? `went through ${o.nodes.join(" → ")}`
        : missing.length
          ? `never reached ${missing.join(", ")} (went ${o.nodes.join(" → ") || "nowhere"})`
          : `reached out of order: ${o.nodes.join(" → ")}`,
    );
  }
  for (const [name, value] of Object.entries(x.extraction ?? {})) {
    const actual = o.gathered[name];
    add(`extraction.${name}`, matchesPartially(value, actual), value, actual ?? null, `gathered ${JSON.stringify(o.gathered)}`);
  }
  (x.tools_called ?? []).forEach((want, i) => {
    const calls = o.actions.filter((a) => a.name === want.name);
    // A wrong URL still makes the call: it counts only when the tool answered, unless the scenario says otherwise.
    const hit = calls.find(
      (a) => (!want.arguments || matchesPartially(want.arguments, a.arguments)) && (want.answered === false || a.status === undefined || a.status === "ok"),
    );
    const seen = o.actions.map((a) => `${a.name}(${JSON.stringify(a.arguments)})${a.status ? ` ${a.status}` : ""}`).join(", ") || "none";
    add(
      `tools_called.${i}`,
      !!hit,
      want,
      hit ?? calls[0] ?? null,
      calls.length ? `calls of ${want.name}: ${seen}` : `${want.name} never called; actions: ${seen}`,
    );
  });
  if (x.transfer) {
    const t = o.transfer;
    const passed = !!t && (!x.transfer.destination || t.destination === x.transfer.destination) && (!x.transfer.mode || t.mode === x.transfer.mode);
    add("transfer", passed, x.transfer, t, t ? `transfer to ${t.destination} (${t.mode})` : `no transfer requested; ${excerpt(o.transcript)}`);
  }
  if (x.dtmf_sent !== undefined)
    add("dtmf_sent", lower(o.dtmf) === lower(x.dtmf_sent), x.dtmf_sent, o.dtmf, `the agent sent ${o.dtmf ? `"${o.dtmf}"` : "no keys"}`);
  if (x.disposition !== undefined)
    add("disposition", o.disposition === x.disposition, x.disposition, o.disposition, `disposition ${o.disposition ?? "none"}; ${excerpt(o.transcript)}`);
  if (x.end_reason !== undefined) add("end_reason", o.endReason === x.end_reason, x.end_reason, o.endReason, `the call ended: ${o.endReason ?? "unknown"}`);
  for (const [name, value] of Object.entries(x.analysis ?? {})) {
    const actual = o.analysis?.[name];
    add(
      `analysis.${name}`,
      matchesPartially(value, actual),
      value,
      actual ?? null,
      o.analysis ? `structured data ${JSON.stringify(o.analysis)}` : "no analysis ran",
    );
  }
  if (x.max_answer_latency_ms !== undefined) {
    const lat = answerLatencies(o.transcript);
    const worst = lat.reduce<{ index: number; ms: number } | null>((w, l) => (!w || l.ms > w.ms ? l : w), null);
    add(
      "max_answer_latency_ms",
      !!worst && worst.ms <= x.max_answer_latency_ms,
      x.max_answer_latency_ms,
      worst?.ms ?? null,
      worst ? `slowest answer ${worst.ms} ms, after: ${excerpt(o.transcript, worst.index, 1)}` : "the agent never answered a caller's turn",
    );
  }
  for (const phrase of x.never_says ?? []) {
    const i = o.transcript.findIndex((t) => t.role === "agent" && lower(t.text).includes(lower(phrase)));
    add(
      `never_says.${phrase}`,
      i < 0,
      `never "${phrase}"`,
      i < 0 ? null : o.transcript[i].text,
      i < 0 ? "not said" : `said at ${o.transcript[i].start_ms} ms: ${excerpt(o.transcript, i, 0)}`,
    );
  }
  for (const criterion of x.rubric ?? []) {
    const v = o.rubric?.find((r) => r.criterion === criterion);
    add(
      `rubric.${criterion}`,
      !!v?.passed,
      criterion,
      v ? v.passed : null,
      v ? v.reasoning : "no judge model: a rubric criterion needs a model (Workers AI or the suite's endpoint)",
    );
  }
  return out;
}
