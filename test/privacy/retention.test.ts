// Retention, end to end: the data policy over HTTP, then runs of several ages (created_at written, as the clock cannot
// age a D1 default) with recordings and details objects in R2; the purge (the cron's own function) removes from the
// API, R2 and D1 exactly what expired, an agent's override wins, and one audit entry per organization carries counts.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { purgeExpired } from "../../src/privacy/purge";
import { call, createOrg } from "../helpers";
import { agentWith, setup, startCall, type Setup } from "../calls/support";

afterEach(() => clock.set(null));

const DAY = 86_400_000;

/** A finished call `ageDays` old with a recording, a details object and legacy transcript columns. */
async function finishedRun(s: Setup, ageDays: number) {
  const id = await startCall(s);
  const rec = `recordings/${s.org.id}/${id}.pcm`;
  const details = `details/${s.org.id}/${id}.json`;
  await env.UPLOADS.put(rec, new Uint8Array(640).fill(3));
  await env.UPLOADS.put(details, JSON.stringify({ transcript: [{ role: "callee", text: "hello" }] }));
  const transcript = JSON.stringify([{ role: "callee", text: "my card is 4111", start_ms: 0, end_ms: 900, interrupted: false }]);
  await env.DB.prepare(
    `UPDATE workflow_runs SET status = 'completed', created_at = ?, recording_key = ?, recording_rate = 8000, details_key = ?,
       transcript = ?, gathered_context = '{"x":1}' WHERE id = ?`,
  )
    .bind(new Date(clock.now() - ageDays * DAY).toISOString(), rec, details, transcript, id)
    .run();
  return { id, rec, details };
}

const row = (id: number) => env.DB.prepare("SELECT * FROM workflow_runs WHERE id = ?").bind(id).first<Record<string, unknown>>();
const has = async (key: string) => (await env.UPLOADS.head(key)) !== null;
const purges = async (orgKey: string) =>
  (await call("GET", "/api/v1/organizations/audit-log?limit=100", { key: orgKey })).json.items.filter((e: any) => e.action === "purge");

describe("data policy", () => {
  it("is read and replaced over the API, audited, and refuses bad days with a located 422", async () => {
    const org = await createOrg();
    const initial = await call("GET", "/api/v1/organizations/data-policy", { key: org.key });
    expect(initial.json).toEqual({ retention: { recordings_days: null, transcripts_days: null, runs_days: null }, redact_pii: false, updated_at: null });
    const put = await call("PUT", "/api/v1/organizations/data-policy", {
      key: org.key,
      body: { retention: { recordings_days: 7, runs_days: 90 }, redact_pii: true },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({ retention: { recordings_days: 7, transcripts_days: null, runs_days: 90 }, redact_pii: true });
    // redact_pii alone keeps the retention.
    const again = await call("PUT", "/api/v1/organizations/data-policy", { key: org.key, body: { redact_pii: false } });
    expect(again.json).toMatchObject({ retention: { recordings_days: 7, runs_days: 90 }, redact_pii: false });
    for (const [body, loc] of [
      [{ retention: { recordings_days: 0 } }, ["body", "retention", "recordings_days"]],
      [{ retention: { runs_days: 3651 } }, ["body", "retention", "runs_days"]],
      [{ retention: { runs_days: 1.5 } }, ["body", "retention", "runs_days"]],
      [{ retention: { forever: true } }, ["body", "retention", "forever"]],
      [{ redact_pii: "yes" }, ["body", "redact_pii"]],
    ] as const) {
      const bad = await call("PUT", "/api/v1/organizations/data-policy", { key: org.key, body });
      expect(bad.status, JSON.stringify(body)).toBe(422);
      expect(bad.json.detail[0].loc).toEqual(loc);
    }
    const audit = (await call("GET", "/api/v1/organizations/audit-log", { key: org.key })).json.items;
    expect(audit.filter((e: any) => e.resource_type === "data_policy")).toHaveLength(2);
    expect((await call("GET", "/api/v1/organizations/data-policy", {})).status).toBe(401);
  });
});

describe("retention purge", () => {
  it("removes what expired from the API, R2 and D1, keeps younger data, lets an agent's override win, audits counts", async () => {
    const s = await setup("twilio");
    const put = await call("PUT", "/api/v1/organizations/data-policy", {
      key: s.org.key,
      body: { retention: { recordings_days: 7, transcripts_days: 30, runs_days: 90 } },
    });
    expect(put.status, put.text).toBe(200);
    // A second agent keeps runs only 5 days (its other kinds follow the organization).
    const b = await agentWith(s, "Hi");
    const cfg = await call("PUT", `/api/v1/workflow/${b.agent.id}`, { key: s.org.key, body: { workflow_configurations: { retention: { runs_days: 5 } } } });
    expect(cfg.status, cfg.text).toBe(200);

    const old = await finishedRun(s, 100);
    const month = await finishedRun(s, 40);
    const week = await finishedRun(s, 10);
    const fresh = await finishedRun(s, 1);
    const bWeek = await finishedRun(b, 10);
    const bFresh = await finishedRun(b, 1);
    // Another organization with the same ages and no policy: untouched.
    const other = await setup("twilio", {}, await createOrg());
    const otherOld = await finishedRun(other, 100);

    const result = await purgeExpired(env, clock.now());
    expect(result.counts).toEqual({ runs: 2, transcripts: 1, recordings: 2 });

    // Past runs_days (the organization's 90, the agent's 5): gone from the API, D1 and R2.
    for (const r of [old, bWeek]) {
      const agentId = r === old ? s.agent.id : b.agent.id;
      expect((await call("GET", `/api/v1/workflow/${agentId}/runs/${r.id}`, { key: s.org.key })).status).toBe(404);
      expect(await row(r.id)).toBeNull();
      expect(await has(r.rec)).toBe(false);
      expect(await has(r.details)).toBe(false);
    }
    // Past transcripts_days: no transcript or details anywhere, and no recording either (past recordings_days).
    const m = await row(month.id);
    expect(m).toMatchObject({ details_key: null, transcript: null, gathered_context: null, recording_key: null });
    expect(await has(month.details)).toBe(false);
    expect(await has(month.rec)).toBe(false);
    const view = (await call("GET", `/api/v1/workflow/${s.agent.id}/runs/${month.id}`, { key: s.org.key })).json;
    expect(view.recording_url).toBeNull();
    expect(view.transcript ?? []).toEqual([]);
    // Past recordings_days only: the recording went, the details stayed.
    expect(await row(week.id)).toMatchObject({ recording_key: null, details_key: week.details });
    expect(await has(week.rec)).toBe(false);
    expect(await has(week.details)).toBe(true);
    // Young runs keep everything.
    for (const r of [fresh, bFresh, otherOld]) {
      expect(await row(r.id)).toMatchObject({ recording_key: r.rec, details_key: r.details });
      expect(await has(r.rec)).toBe(true);
      expect(await has(r.details)).toBe(true);
    }

    // One audit entry with the counts (no number, run or key in it); the purge is daily.
    const entries = await purges(s.org.key);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resource_type: "run_data", api_key_id: null, summary: { runs: 2, transcripts: 1, recordings: 2, complete: true } });
    await purgeExpired(env, clock.now());
    expect(await purges(s.org.key)).toHaveLength(1);
    expect(await purges(other.org.key)).toHaveLength(0);

    // A week later the next daily purge takes what aged past its setting since: the day-old run's recording, and
    // agent B's day-old run (past its 5 days).
    clock.set(Date.now() + 7 * DAY);
    await purgeExpired(env, clock.now());
    const later = await purges(s.org.key);
    expect(later).toHaveLength(2);
    expect(later[0].summary).toEqual({ runs: 1, transcripts: 0, recordings: 1, complete: true });
    expect(await row(fresh.id)).toMatchObject({ recording_key: null, details_key: fresh.details });
    expect(await row(bFresh.id)).toBeNull();
  });
});
