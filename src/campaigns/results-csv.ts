// A campaign's results as CSV: one row per contact in row order, with its CSV columns, attempts, final outcome, the
// agent's disposition and gathered values, and its runs. Streamed a page of contacts at a time (the campaign object,
// then one D1 query for the page's gathered values), so memory stays flat whatever the campaign's size.
import Papa from "papaparse";
import { sql } from "drizzle-orm";
import { extractedNames } from "../agent/graph";
import { getDb } from "../lib/db";
import type { ContactView } from "./engine/contact-runs";
import { CALL_COLUMNS, type LastCall, lastCallCells, lastCalls } from "./results-calls";

export { CALL_COLUMNS };
import { unwrap } from "./errors";
import type { CampaignRpc } from "./stub";

export const EXPORT_PAGE = 500;

/**
 * A cell as a spreadsheet will read it: text a spreadsheet would run as a formula (=, +, -, @, tab, CR first) is
 * prefixed with a quote. Callees' words reach gathered values through the model, so they are not trusted.
 */
export function safeCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v !== "string") return typeof v === "object" ? JSON.stringify(v) : String(v);
  // A number or a phone number ("+44 20 7946 0958", "-3.5") stays as it is.
  if (/^[+-]?[\d\s().-]+$/.test(v)) return v;
  return /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
}

export type ResultsLayout = { context: string[]; gathered: string[] };

export function header(l: ResultsLayout): string[] {
  return [
    "row",
    "phone_number",
    ...l.context,
    "status",
    "attempts",
    "outcome",
    "disposition",
    ...l.gathered.map((g) => `gathered.${g}`),
    "run_ids",
    ...CALL_COLUMNS,
  ];
}

export function resultRow(l: ResultsLayout, c: ContactView, gathered: Record<string, unknown> | null, last: LastCall | null = null): string[] {
  return [
    String(c.row),
    c.phone_number,
    ...l.context.map((k) => safeCell(c.context?.[k])),
    c.status,
    String(c.attempts),
    c.outcome ?? "",
    c.disposition ?? "",
    ...l.gathered.map((g) => safeCell(gathered?.[g])),
    c.runs
      .map((r) => r.run_id)
      .filter((id) => id !== null)
      .join(";"),
    ...lastCallCells(last),
  ];
}

const csvLines = (rows: string[][]) => `${Papa.unparse(rows, { header: false, newline: "\r\n" })}\r\n`;

/** The newest gathered values of each contact's runs on a page, in one query (the ids go as one JSON parameter). */
async function gatheredOf(env: Env, orgId: number, page: ContactView[]): Promise<Map<number, Record<string, unknown>>> {
  const ids = page.flatMap((c) => c.runs.map((r) => r.run_id).filter((id): id is number => id !== null));
  const out = new Map<number, Record<string, unknown>>();
  if (!ids.length) return out;
  const rows = await getDb(env).all<{ id: number; g: string | null }>(
    sql`SELECT id, gathered_context AS g FROM workflow_runs WHERE org_id = ${orgId} AND gathered_context IS NOT NULL AND id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
  );
  const byRun = new Map(rows.map((r) => [r.id, r.g ? (JSON.parse(r.g) as Record<string, unknown>) : null]));
  for (const c of page) {
    // The newest attempt that gathered anything.
    for (const r of [...c.runs].reverse()) {
      const g = r.run_id !== null ? byRun.get(r.run_id) : null;
      if (g) {
        out.set(c.id, g);
        break;
      }
    }
  }
  return out;
}

/** The whole export as a byte stream: the header, then a page of contacts per pull. */
export function resultsCsv(env: Env, orgId: number, stub: CampaignRpc, definition: unknown, requestUrl: string): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let after: number | null = 0;
  let layout: ResultsLayout | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (after === null) return controller.close();
      const page = unwrap(await stub.contacts(after, EXPORT_PAGE, true));
      let text = "";
      if (!layout) {
        // Every contact of a file has its columns; the first names them.
        layout = { context: Object.keys(page.items[0]?.context ?? {}), gathered: extractedNames(definition) };
        text += csvLines([header(layout)]);
      }
      if (page.items.length) {
        const [gathered, last] = await Promise.all([gatheredOf(env, orgId, page.items), lastCalls(env, orgId, page.items, requestUrl)]);
        text += csvLines(page.items.map((c) => resultRow(layout!, c, gathered.get(c.id) ?? null, last.get(c.id) ?? null)));
      }
      after = page.next;
      controller.enqueue(enc.encode(text));
    },
  });
}
