// Erasure by phone number over HTTP: afterwards no D1 table (walked through sqlite_master) and no R2 object (listed
// and read) of the organization holds the number, its campaign contact is gone from the campaign object, the number
// is suppressed (a new call is refused), and another organization's run to the same number is untouched.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";
import { CONTEXT, campaignId, campaignObject, setup, startCall, type Setup } from "../calls/support";

// Numbers no other file calls: the traces are looked for in every table and object of the shared runtime.
const ERASED = "+14155557319";
const OTHER = "+14155557320";

async function finishedRun(s: Setup) {
  const id = await startCall(s, { phone_number: ERASED });
  const rec = `recordings/${s.org.id}/${id}.pcm`;
  const details = `details/${s.org.id}/${id}.json`;
  await env.UPLOADS.put(rec, new Uint8Array(640).fill(5));
  await env.UPLOADS.put(details, JSON.stringify({ transcript: [{ role: "callee", text: `call me on ${ERASED}` }] }));
  await env.DB.prepare("UPDATE workflow_runs SET status = 'completed', recording_key = ?, details_key = ?, transcript = ? WHERE id = ?")
    .bind(rec, details, JSON.stringify([{ role: "callee", text: `it is ${ERASED}`, start_ms: 0, end_ms: 1, interrupted: false }]), id)
    .run();
  return { id, rec, details };
}

/** Every row of every D1 table that holds `text`, as "table: row". */
async function d1Traces(text: string): Promise<string[]> {
  const { results: tables } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
  ).all<{ name: string }>();
  expect(tables.length).toBeGreaterThan(10);
  const out: string[] = [];
  for (const { name } of tables) {
    const { results } = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
    for (const r of results) if (JSON.stringify(r).includes(text)) out.push(`${name}: ${JSON.stringify(r)}`);
  }
  return out;
}

/** Every R2 object whose key or body holds `text`. */
async function r2Traces(text: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.UPLOADS.list({ cursor });
    for (const o of page.objects) {
      const body = await (await env.UPLOADS.get(o.key))!.text();
      if (o.key.includes(text) || body.includes(text)) out.push(o.key);
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

describe("erasure", () => {
  it("removes every trace of the number in the organization, suppresses it, and leaves another organization alone", async () => {
    const s = await setup("twilio");
    const other = await setup("twilio", {}, await createOrg());
    const mine = await finishedRun(s);
    const keep = await finishedRun(s); // moved to another number below: must stay
    // (A number merely spoken in someone else's call is not looked for: that run names only its own number.)
    await env.DB.prepare("UPDATE workflow_runs SET phone_number = ?, transcript = NULL WHERE id = ?").bind(OTHER, keep.id).run();
    await env.UPLOADS.put(keep.details, JSON.stringify({ transcript: [] }));
    const theirs = await finishedRun(other);

    // A webhook node delivery of the run and an event naming the number.
    const ep = await env.DB.prepare(
      `INSERT INTO webhook_endpoints (org_id, url, events, secret, secret_last4) VALUES (?, 'https://hooks.example/x', '["call.completed"]', '{"kid":"k","iv":"i","ct":"c"}', 'abcd') RETURNING id`,
    )
      .bind(s.org.id)
      .first<{ id: number }>();
    await env.DB.prepare(
      "INSERT INTO webhook_deliveries (org_id, endpoint_id, message_id, event, payload, run_id, node_id) VALUES (?, ?, 'm1', 'node', '{}', ?, 'n1')",
    )
      .bind(s.org.id, ep!.id, mine.id)
      .run();
    await env.DB.prepare("INSERT INTO webhook_deliveries (org_id, endpoint_id, message_id, event, payload) VALUES (?, ?, 'm2', 'call.completed', ?)")
      .bind(s.org.id, ep!.id, JSON.stringify({ data: { phone_number: ERASED } }))
      .run();

    // A campaign holding the number and another, with its uploaded file.
    const cid = campaignId();
    const file = `campaigns/${s.org.id}/${crypto.randomUUID()}/list.csv`;
    await env.UPLOADS.put(file, `phone_number,first_name\n${ERASED},Ada\n${OTHER},Bob\n`);
    await env.DB.prepare("INSERT INTO campaigns (id, org_id, name, workflow_id, source_id, settings) VALUES (?, ?, 'c', ?, ?, '{}')")
      .bind(cid, s.org.id, s.agent.id, file)
      .run();
    const stub = await campaignObject(s, cid, { enabled: false }, [
      { row: 2, phone_number: ERASED, initial_context: CONTEXT, greeting_override: null },
      { row: 3, phone_number: OTHER, initial_context: CONTEXT, greeting_override: null },
    ]);

    const res = await call("POST", "/api/v1/organizations/erasure", { key: s.org.key, body: { phone_number: ERASED } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      suppressed: true,
      complete: true,
      runs: 1,
      objects: 2,
      webhook_deliveries: 2,
      campaigns: 1,
      contacts: 1,
      files_rewritten: 1,
    });
    expect(res.text).not.toContain(ERASED);

    // No trace left: D1 (only the other organization's run), R2 (only the other organization's objects).
    const d1 = await d1Traces(ERASED);
    expect(d1, d1.join("\n")).toHaveLength(1);
    expect(d1[0]).toMatch(/^workflow_runs: /);
    expect(JSON.parse(d1[0].slice("workflow_runs: ".length))).toMatchObject({ id: theirs.id, org_id: other.org.id });
    expect((await r2Traces(ERASED)).sort()).toEqual([theirs.details]);
    expect(await env.UPLOADS.head(mine.rec)).toBeNull();
    expect(await env.UPLOADS.head(theirs.rec)).not.toBeNull();
    expect(await (await env.UPLOADS.get(file))!.text()).toBe(`phone_number,first_name\n${OTHER},Bob\n`);
    // The organization's other run and contact stay.
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs/${keep.id}`, { key: s.org.key })).status).toBe(200);
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs/${mine.id}`, { key: s.org.key })).status).toBe(404);
    const contacts = await stub.contacts(0, 10);
    expect(contacts.ok && contacts.value.items.map((c) => c.phone_number)).toEqual([OTHER]);

    // Suppressed: listed, and a new call is refused.
    expect((await call("GET", `/api/v1/organizations/suppressions/${encodeURIComponent(ERASED)}`, { key: s.org.key })).status).toBe(200);
    const again = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: ERASED, initial_context: CONTEXT },
    });
    expect(again.status).toBe(422);
    expect(again.json.detail[0].type).toBe("number_suppressed");
    // The other organization still calls it.
    expect((await call("GET", `/api/v1/organizations/suppressions/${encodeURIComponent(ERASED)}`, { key: other.org.key })).status).toBe(404);

    // One audit entry, naming the number by its keyed hash only.
    const audit = (await call("GET", "/api/v1/organizations/audit-log", { key: s.org.key })).json.items;
    const erase = audit.filter((e: any) => e.action === "erase");
    expect(erase).toHaveLength(1);
    expect(erase[0].summary).toMatchObject({ phone_number_ref: res.json.phone_number_ref, runs: 1 });
    expect(JSON.stringify(audit)).not.toContain(ERASED);
  });

  it("refuses a live call's number with 409 (already suppressed), and bad input with 422 or 401", async () => {
    const s = await setup("twilio");
    await startCall(s, { phone_number: ERASED }); // initiated: live
    const live = await call("POST", "/api/v1/organizations/erasure", { key: s.org.key, body: { phone_number: ERASED } });
    expect(live.status, live.text).toBe(409);
    expect((await call("GET", `/api/v1/organizations/suppressions/${encodeURIComponent(ERASED)}`, { key: s.org.key })).status).toBe(200);
    for (const body of [{ phone_number: "4155550123" }, { phone_number: "+1" }, {}, { phone_number: ERASED, extra: 1 }]) {
      const bad = await call("POST", "/api/v1/organizations/erasure", { key: s.org.key, body });
      expect(bad.status, JSON.stringify(body)).toBe(422);
    }
    expect((await call("POST", "/api/v1/organizations/erasure", { body: { phone_number: ERASED } })).status).toBe(401);
  });
});
