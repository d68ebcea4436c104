// results.csv's columns of each contact's newest call (issue 39: an operator could not tell a conversation from a
// call nobody spoke on): its duration, why it ended, whether a conversation took place and the audio each way, the
// transfer's outcome, the analysis' summary, the estimated cost, a signed recording link and who answered (the
// carrier's verdict or the agent's machine detection, issue 42) and the agent's class of who answered (amd_class: an IVR
// menu or a call screening service told apart from a person). One D1 query per page of contacts (a few small
// columns); the summary is read from the run's details object only for runs analysed.
import { sql } from "drizzle-orm";
import { estimateCost } from "../../public/dashboard/cost.js";
import { recordingLink } from "../calls/runs/recordings";
import { readDetails } from "../calls/session/details-object";
import { getDb } from "../lib/db";
import { log } from "../lib/log";
import type { ContactView } from "./engine/contact-runs";

/** How long a results.csv's recording links stay valid: a file is opened later than a run's page (15 minutes). */
export const CSV_RECORDING_URL_TTL_SECONDS = 7 * 24 * 3600;
/** A summary cell's most characters (an analysis' summary is a few sentences). */
export const SUMMARY_CHARS = 500;
/** Details objects read at once for a page's summaries. */
const READS_AT_ONCE = 8;

export type LastCall = {
  duration_seconds: number | null;
  end_reason: string | null;
  conversation: boolean | null;
  caller_audio_s: number | null;
  agent_audio_s: number | null;
  transfer_outcome: string | null;
  summary: string | null;
  cost_usd: string | null;
  recording_url: string | null;
  /** Who answered: the carrier's verdict (`human`, `machine_end_beep`, ...) or the agent's own (`machine_detected`). */
  answered_by: string | null;
  /** The agent's answering-machine class (human, machine_greeting, ivr_menu, call_screening, ...), where it judged. */
  amd_class: string | null;
};

type Row = {
  id: number;
  duration_seconds: number | null;
  end_reason: string | null;
  conversation: number | null;
  media: string | null;
  transfer: string | null;
  usage: string | null;
  provider: string | null;
  direction: string;
  recording_key: string | null;
  details_key: string | null;
  analysis_status: string | null;
  analysis: string | null;
  answered_by: string | null;
  amd_class: string | null;
};

const json = <T>(text: string | null): T | null => (text ? (JSON.parse(text) as T) : null);

/**
 * The newest call's columns, appended after `run_ids` so parsers of the older file keep working (docs/live-calls.md);
 * a new one only ever goes last.
 */
export const CALL_COLUMNS = [
  "duration_seconds",
  "end_reason",
  "conversation",
  "caller_audio_s",
  "agent_audio_s",
  "transfer_outcome",
  "summary",
  "cost_usd",
  "recording_url",
  "answered_by",
  "amd_class",
] as const;

/** The cells of a contact's newest call, in CALL_COLUMNS' order (all empty for a contact never called). */
export function lastCallCells(l: LastCall | null): string[] {
  if (!l) return CALL_COLUMNS.map(() => "");
  const cell = (v: unknown) => (v === null || v === undefined ? "" : String(v));
  // The summary is the model's text about the callee's words: defused like any other cell a spreadsheet might run.
  const summary = l.summary && /^[=+\-@\t\r]/.test(l.summary) ? `'${l.summary}` : l.summary;
  return [
    cell(l.duration_seconds),
    cell(l.end_reason),
    cell(l.conversation),
    cell(l.caller_audio_s),
    cell(l.agent_audio_s),
    cell(l.transfer_outcome),
    cell(summary),
    cell(l.cost_usd),
    cell(l.recording_url),
    cell(l.answered_by),
    cell(l.amd_class),
  ];
}

/** Each contact's newest call on a page (by contact id), in one query and a few object reads. */
export async function lastCalls(env: Env, orgId: number, page: ContactView[], requestUrl: string): Promise<Map<number, LastCall>> {
  const newest = new Map<number, number>();
  for (const c of page) {
    const ids = c.runs.map((r) => r.run_id).filter((x): x is number => x !== null);
    if (ids.length) newest.set(c.id, ids[ids.length - 1]);
  }
  const out = new Map<number, LastCall>();
  if (!newest.size) return out;
  const rows = await getDb(env).all<Row>(
    sql`SELECT id, duration_seconds, end_reason, conversation, media, transfer, usage, provider, direction, recording_key, details_key, analysis_status, analysis, answered_by, amd_class
        FROM workflow_runs WHERE org_id = ${orgId} AND id IN (SELECT value FROM json_each(${JSON.stringify([...newest.values()])}))`,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const summaries = await summariesOf(env, rows);
  for (const [contactId, runId] of newest) {
    const r = byId.get(runId);
    if (!r) continue;
    const media = json<{ caller_audio_s: number; agent_audio_s: number }>(r.media);
    const cost = estimateCost({ usage: json(r.usage), duration_seconds: r.duration_seconds, provider: r.provider, direction: r.direction });
    out.set(contactId, {
      duration_seconds: r.duration_seconds,
      end_reason: r.end_reason,
      conversation: r.conversation === null ? null : r.conversation === 1,
      caller_audio_s: media?.caller_audio_s ?? null,
      agent_audio_s: media?.agent_audio_s ?? null,
      transfer_outcome: (json<{ outcome?: string | null }>(r.transfer)?.outcome ?? null) || null,
      summary: summaries.get(r.id) ?? null,
      cost_usd: cost ? cost.total.toFixed(4) : null,
      recording_url: r.recording_key ? await recordingLink(env, requestUrl, r.id, CSV_RECORDING_URL_TTL_SECONDS) : null,
      answered_by: r.answered_by,
      amd_class: r.amd_class,
    });
  }
  return out;
}

/** The analysis' summary of each analysed run: from its row (older runs) or its details object. */
async function summariesOf(env: Env, rows: Row[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const set = (id: number, a: { summary?: unknown } | null | undefined) => {
    if (typeof a?.summary === "string" && a.summary) out.set(id, a.summary.slice(0, SUMMARY_CHARS));
  };
  const fromObjects: Row[] = [];
  for (const r of rows) {
    if (r.analysis) set(r.id, json(r.analysis));
    else if (r.analysis_status === "ok" && r.details_key) fromObjects.push(r);
  }
  for (let i = 0; i < fromObjects.length; i += READS_AT_ONCE) {
    await Promise.all(
      fromObjects.slice(i, i + READS_AT_ONCE).map(async (r) => {
        try {
          set(r.id, (await readDetails(env.UPLOADS, r.details_key!))?.analysis as { summary?: unknown } | null);
        } catch (err) {
          // The row goes out without its summary rather than failing the whole export.
          log("error", "run_details_not_read", { run_id: r.id, error: String(err) });
        }
      }),
    );
  }
  return out;
}
