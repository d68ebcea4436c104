// Originate retries: a request the carrier certainly did not act on (429, a 503 naming no
// call, a connection refused before sending) is repeated with bounded backoff honouring Retry-After; an
// ambiguous one (500, a timeout after sending) is asked once, so no one is ever called twice. The waits go
// through clock.sleep, replaced here, so nothing sleeps for real. Refusals name the carrier and its code.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { clock } from "../../src/lib/clock";
import { certainlyNotPlaced, failedBeforeSending, originateFetch, refused, retryAfterMs, type CarrierResponse } from "../../src/telephony/providers/kit";
import type { ProviderName } from "../../src/telephony/providers/types";
import { call } from "../helpers";
import { CALLEE, campaignObject, runRow, setup, simBusy, simFault, simRefuse, simRequests, type Recorded, type Setup, CONTEXT, LABEL } from "./support";
import { unwrap } from "../../src/campaigns/errors";

/** Requests that place a call (provisioning on save also POSTs, to application endpoints). */
const originates = (reqs: Recorded[]) => reqs.filter((r) => r.method === "POST" && !/Application|call_control_applications|applications/.test(r.path));
const dial = (s: Setup) =>
  call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: CONTEXT } });

let waits: number[] = [];
beforeEach(() => {
  waits = [];
  clock.setSleep(async (ms) => {
    waits.push(ms);
  });
});
afterEach(() => clock.setSleep(null));

const PROVIDERS: ProviderName[] = ["twilio", "plivo", "vobiz", "telnyx", "vonage", "cloudonix", "exotel", "ari"];

describe.each(PROVIDERS)("%s originate retries", (provider) => {
  it("429 with Retry-After twice, then accepted: three requests, waits as the carrier asked, one call", async () => {
    const s = await setup(provider);
    await simBusy(s.acct, "originate", 429, { retryAfter: "2", times: 2 });
    const res = await dial(s);
    expect(res.status, res.text).toBe(200);
    expect(originates(await simRequests(s.acct))).toHaveLength(3);
    expect(waits).toEqual([2000, 2000]);
    const run = await runRow(res.json.workflow_run_id);
    expect(run.status).toBe("initiated");
    expect(run.providerCallId).toBeTruthy();
  });

  it("503 naming no call, then accepted: retried after the default backoff", async () => {
    const s = await setup(provider);
    await simBusy(s.acct, "originate", 503);
    const res = await dial(s);
    expect(res.status, res.text).toBe(200);
    expect(originates(await simRequests(s.acct))).toHaveLength(2);
    expect(waits).toEqual([500]);
  });

  it("a 500 is ambiguous: asked once, 502 naming the carrier, no wait", async () => {
    const s = await setup(provider);
    await simFault(s.acct, "originate", 500, "carrier exploded", 3);
    const res = await dial(s);
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(new RegExp(`^${LABEL[provider]} refused the call \\(HTTP 500(, code [^)]+)?\\): .*carrier exploded`));
    expect(originates(await simRequests(s.acct))).toHaveLength(1);
    expect(waits).toEqual([]);
  });
});

describe("originate retry bounds", () => {
  it("a carrier that keeps answering 429 is asked three times, then the call fails with its reason", async () => {
    const s = await setup("twilio");
    await simBusy(s.acct, "originate", 429, { times: 5 });
    const res = await dial(s);
    expect(res.status).toBe(502);
    expect(res.json.detail).toBe("Twilio refused the call (HTTP 429, code 20500): Too Many Requests (3 attempts)");
    expect(originates(await simRequests(s.acct))).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
    const runs = (await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key })).json.items;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", error: res.json.detail, provider_call_id: null });
  });

  it("a Retry-After longer than the wait budget is not waited out: one request, the refusal reported", async () => {
    const s = await setup("telnyx");
    await simBusy(s.acct, "originate", 429, { retryAfter: "60", times: 1 });
    const res = await dial(s);
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/^Telnyx refused the call \(HTTP 429, code 10007\): /);
    expect(originates(await simRequests(s.acct))).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("a connection refused before the request was sent is retried", async () => {
    const s = await setup("plivo");
    await simRefuse(s.acct, "originate");
    const res = await dial(s);
    expect(res.status, res.text).toBe(200);
    expect(originates(await simRequests(s.acct))).toHaveLength(2);
    expect(waits).toEqual([500]);
  });

  it("a campaign attempt rides out a 429 and is dialled once; an exhausted one is logged with the carrier's reason", async () => {
    const s = await setup("twilio");
    await simBusy(s.acct, "originate", 429, { retryAfter: "1", times: 1 });
    const id = 810_000 + Math.floor(Math.random() * 90_000);
    const stub = await campaignObject(s, id, { enabled: false }, [{ row: 2, phone_number: CALLEE, initial_context: {}, greeting_override: null }]);
    await stub.start();
    const runsOf = () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    for (let i = 0; i < 5 && (await runsOf()).length === 0; i++) await runDurableObjectAlarm(stub);
    expect((await runsOf()).map((r) => r.status)).toEqual(["initiated"]);
    expect(originates(await simRequests(s.acct))).toHaveLength(2);
    expect(waits).toEqual([1000]);

    const t = await setup("twilio");
    await simBusy(t.acct, "originate", 429, { times: 3 });
    const id2 = id + 1;
    const stub2 = await campaignObject(t, id2, { enabled: true, max_retries: 2, retry_delay_seconds: 30 }, [
      { row: 2, phone_number: CALLEE, initial_context: {}, greeting_override: null },
    ]);
    await stub2.start();
    for (let i = 0; i < 5 && !unwrap(await stub2.snapshot()).logs.some((l) => l.event === "dial_failed"); i++) await runDurableObjectAlarm(stub2);
    const failed = unwrap(await stub2.snapshot()).logs.find((l) => l.event === "dial_failed");
    const reason = "Twilio refused the call (HTTP 429, code 20500): Too Many Requests (3 attempts)";
    expect(failed).toMatchObject({ level: "warning", message: expect.stringContaining(reason), details: { error: reason, kind: "carrier_refused" } });
    expect(unwrap(await stub2.snapshot()).logs.filter((l) => l.event === "dial_failed")).toHaveLength(1);
  });
});

describe("the retry rules (kit)", () => {
  const res = (status: number, json: unknown = null, extra: Partial<CarrierResponse> = {}): CarrierResponse => ({ status, text: "", json, ...extra });
  const sid = (j: any) => j?.sid;

  it("retries only what certainly placed no call", () => {
    expect(certainlyNotPlaced(res(429), sid)).toBe(true);
    expect(certainlyNotPlaced(res(503), sid)).toBe(true);
    expect(certainlyNotPlaced(res(503, { sid: "CA1" }), sid)).toBe(false);
    expect(certainlyNotPlaced(res(500), sid)).toBe(false);
    expect(certainlyNotPlaced(res(502), sid)).toBe(false);
    expect(certainlyNotPlaced(res(400), sid)).toBe(false);
    expect(certainlyNotPlaced(res(0, null, { notSent: true }), sid)).toBe(true);
    expect(certainlyNotPlaced(res(0), sid)).toBe(false); // a timeout or a dropped connection
  });

  it("tells a connect failure from a connection lost after sending", () => {
    expect(failedBeforeSending(Object.assign(new Error("fetch failed"), { cause: { code: "ECONNREFUSED" } }))).toBe(true);
    expect(failedBeforeSending(new Error("connect ECONNREFUSED 10.0.0.1:443"))).toBe(true);
    expect(failedBeforeSending(new Error("getaddrinfo ENOTFOUND api.twilio.com"))).toBe(true);
    // workerd says this both for a refused connect and for a drop mid-request: ambiguous.
    expect(failedBeforeSending(new Error("Network connection lost."))).toBe(false);
    expect(failedBeforeSending(new DOMException("timed out", "TimeoutError"))).toBe(false);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(new Date(1_700_000_010_000).toUTCString(), 1_700_000_000_000)).toBe(10_000);
    expect(retryAfterMs(new Date(1_600_000_000_000).toUTCString(), 1_700_000_000_000)).toBe(0);
    expect(retryAfterMs("soon")).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });

  it("asks again with fresh credentials per attempt, never after a timeout, and stops at the attempt limit", async () => {
    const seen: string[] = [];
    const answers = [new Response("{}", { status: 503 }), new Response(JSON.stringify({ sid: "CA9" }), { status: 201 })];
    let n = 0;
    const fetcher = (async (_url: string, init: RequestInit) => {
      seen.push(new Headers(init.headers).get("authorization")!);
      return answers.shift()!;
    }) as unknown as typeof fetch;
    const ok = await originateFetch(
      "http://carrier.test/calls",
      async () => ({ method: "POST", headers: { Authorization: `Bearer t${++n}` } }),
      {},
      sid,
      fetcher,
    );
    expect(ok).toMatchObject({ status: 201, attempts: 2, json: { sid: "CA9" } });
    expect(seen).toEqual(["Bearer t1", "Bearer t2"]);

    let calls = 0;
    const hung = (async () => {
      calls++;
      throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
    }) as unknown as typeof fetch;
    const timedOut = await originateFetch("http://carrier.test/calls", { method: "POST" }, { carrierTimeoutMs: 1000 }, sid, hung);
    expect(calls).toBe(1);
    expect(refused("Twilio", timedOut, null)).toEqual({ ok: false, message: "Twilio request timed out after 1 s" });

    let busy = 0;
    const always429 = (async () => {
      busy++;
      return new Response("{}", { status: 429 });
    }) as unknown as typeof fetch;
    const r = await originateFetch("http://carrier.test/calls", { method: "POST" }, { originateRetry: { attempts: 2 } }, sid, always429);
    expect([busy, r.attempts, r.status]).toEqual([2, 2, 429]);
    expect(waits).toEqual([500, 500]);
  });
});
