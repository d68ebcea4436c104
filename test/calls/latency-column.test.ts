// A long call's latency column in D1: bounded (a run's whole row stays under 1 kB with 36 replies, where the old
// column alone took ~2.6 kB), and the latency endpoint over HTTP reads it together with rows from before it (exact
// values per figure, or a transcript still in D1) within the documented error of the exact summary.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LATENCY_FIGURES, summarizeLatency } from "../../src/calls/runs/latency";
import { transcriptFigures } from "../../src/calls/runs/latency-summary";
import { latencySummary } from "../../src/calls/session/details-object";
import { RELATIVE_ERROR } from "../../src/calls/session/latency-record";
import { call } from "../helpers";
import { conversationCall, runWhen, seatsConversation } from "./conversation-support";
import { errorAtLevel, longCall, random } from "./long-calls";
import { runRow, setup } from "./support";

/** The bytes a run's row keeps in D1: every column's stored length. */
async function rowBytes(runId: number): Promise<number> {
  const cols = (await env.DB.prepare("PRAGMA table_info(workflow_runs)").all<{ name: string }>()).results.map((c) => c.name);
  const sum = cols.map((c) => `coalesce(length("${c}"), 0)`).join(" + ");
  return (await env.DB.prepare(`SELECT ${sum} AS n FROM workflow_runs WHERE id = ?`).bind(runId).first<{ n: number }>())!.n;
}

describe("the latency column", () => {
  it("a 36-reply call's row stays under 1 kB; the endpoint's figures are within the column's error of the exact ones", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s);
    await seatsConversation(callee);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    // The session stored the compact shape: [replies, histograms...].
    const stored = (await runRow(runId)).latency;
    expect(Array.isArray(stored)).toBe(true);
    expect((stored as number[])[0]).toBe(run.transcript.filter((t: any) => t.role === "agent" && t.timing).length);
    const shortBytes = await rowBytes(runId);

    // The same run as a 3-minute call would leave it: 36 replies' column, from the function the session saves with.
    const rnd = random(38);
    const long = longCall(36, rnd);
    const column = latencySummary(long)!;
    await env.DB.prepare("UPDATE workflow_runs SET latency = ? WHERE id = ?").bind(JSON.stringify(column), runId).run();
    const bytes = await rowBytes(runId);
    // The shape rows had before (every value under every figure's name), for comparison.
    const [newColumn, oldColumn] = [JSON.stringify(column).length, JSON.stringify(transcriptFigures(long)).length];
    console.log(`D1 row: ${shortBytes} B (3 replies), ${bytes} B with 36 replies (latency ${newColumn} B; the old column: ${oldColumn} B)`);
    expect(bytes).toBeLessThanOrEqual(1024);
    expect(bytes - newColumn + oldColumn).toBeGreaterThan(1024);

    // More runs of the agent: two long calls stored the new way, one row holding exact values (written before the
    // histograms), one whose transcript is still in D1 (before the column).
    const more = [longCall(36, rnd), longCall(40, rnd), longCall(20, rnd), longCall(12, rnd)];
    const latencies = [latencySummary(more[0]), latencySummary(more[1]), transcriptFigures(more[2]), null];
    for (const [i, latency] of latencies.entries())
      await env.DB.prepare(
        `INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status, latency, transcript)
         VALUES (?, ?, ?, ?, '+14155550123', 'completed', ?, ?)`,
      )
        .bind(
          s.org.id,
          `WR-long-${crypto.randomUUID()}`,
          agentId,
          s.agent.workflow_uuid,
          latency && JSON.stringify(latency),
          latency ? null : JSON.stringify(more[i]),
        )
        .run();

    const res = await call("GET", `/api/v1/workflow/${agentId}/latency?calls=10`, { key: s.org.key });
    expect(res.status, res.text).toBe(200);
    const exact = summarizeLatency(agentId, [long, ...more]);
    expect(res.json).toMatchObject({ workflow_id: agentId, calls: 5, replies: exact.replies });
    // Each figure's bound is the coarsest level a stored histogram of it took (2 % doubling per level).
    const histograms = [column, latencies[0], latencies[1]] as Array<Array<number | number[]>>;
    for (const [i, f] of LATENCY_FIGURES.entries()) {
      const level = Math.max(0, ...histograms.map((c) => (Array.isArray(c[i + 1]) ? (c[i + 1] as number[])[0] : 0)));
      const bound = errorAtLevel(level, RELATIVE_ERROR);
      expect(bound).toBeLessThanOrEqual(0.08);
      expect(res.json.figures[f].count, f).toBe(exact.figures[f].count);
      for (const p of ["p50", "p95"] as const) {
        const want = exact.figures[f][p]!;
        expect(Math.abs(res.json.figures[f][p] - want), `${f} ${p}: ${res.json.figures[f][p]} for ${want}`).toBeLessThanOrEqual(bound * want + 1);
      }
    }
  }, 120_000);
});
