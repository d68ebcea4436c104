// Rate limits: call starts per organization and per key, API requests per key; 429
// `Rate limit exceeded` with Retry-After, told apart from the concurrent-call cap. The test pool's limits are
// generous (test/test-bindings.ts); each test sets its own organization's limits low.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { organizationStub } from "../../src/organizations/organization-object";
import { DEFAULT_RATE_LIMITS, maxRequestBatch, rateLimitsOf, REQUEST_BATCH_MAX, type RequestDecision } from "../../src/organizations/rate-limits";
import { call, createOrg, type Org } from "../helpers";
import { CALLEE, campaignId, campaignObject, setup, simRequests, type Setup, CONTEXT } from "../calls/support";

afterEach(() => clock.set(null));

const startAs = (s: Setup, key: string) =>
  call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key, body: { phone_number: CALLEE, initial_context: CONTEXT } });
const originates = async (s: Setup) => (await simRequests(s.acct)).filter((r) => r.method === "POST" && /Calls\.json$/.test(r.path)).length;

async function secondKey(org: Org): Promise<string> {
  const res = await call("POST", "/api/v1/organizations/api-keys", { key: org.key, body: { name: "second" } });
  expect(res.status, res.text).toBe(200);
  return res.json.key;
}

function expectRefused(d: RequestDecision) {
  expect([d.ok, d.granted, d.retryAfterSeconds]).toEqual([false, 0, 1]);
}

function expectRateLimited(res: Awaited<ReturnType<typeof call>>, retryAfter?: number) {
  expect(res.status, res.text).toBe(429);
  expect(res.json).toEqual({ detail: "Rate limit exceeded" });
  const header = res.headers.get("Retry-After");
  expect(header).toMatch(/^[1-9]\d*$/);
  if (retryAfter !== undefined) expect(Number(header)).toBe(retryAfter);
}

describe("call starts", () => {
  it("burst + 1 rapid call starts: the last is 429 Rate limit exceeded with Retry-After and dials nothing; allowed again once the clock moves", async () => {
    const s = await setup("twilio");
    await organizationStub(env, s.org.id).setRateLimits({ callStartsPerKey: { rate: 0.5, burst: 3 } });
    const t0 = Date.now();
    clock.set(t0);
    for (let i = 0; i < 3; i++) expect((await startAs(s, s.org.key)).status).toBe(200);
    const refused = await startAs(s, s.org.key);
    expectRateLimited(refused, 2); // one token at 0.5 per second
    expect(await originates(s)).toBe(3);
    // The refusal created no run.
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key })).json.items).toHaveLength(3);

    clock.set(t0 + 1_000);
    expectRateLimited(await startAs(s, s.org.key), 1);
    clock.set(t0 + 2_000);
    expect((await startAs(s, s.org.key)).status).toBe(200);
    expect(await originates(s)).toBe(4);
  });

  it("another organization is unaffected; another key of the same organization has its own bucket but shares the organization's", async () => {
    const s = await setup("twilio");
    const other = await setup("twilio");
    const stub = organizationStub(env, s.org.id);
    await stub.setRateLimits({ callStartsPerKey: { rate: 0.1, burst: 2 }, callStartsPerOrg: { rate: 0.1, burst: 3 } });
    await organizationStub(env, other.org.id).setRateLimits({ callStartsPerKey: { rate: 0.1, burst: 2 } });
    clock.set(Date.now());
    const key2 = await secondKey(s.org);

    expect((await startAs(s, s.org.key)).status).toBe(200);
    expect((await startAs(s, s.org.key)).status).toBe(200);
    expectRateLimited(await startAs(s, s.org.key), 10); // the first key's bucket is empty
    expect((await startAs(s, key2)).status).toBe(200); // the second key's is not; the organization had 1 left
    expectRateLimited(await startAs(s, key2)); // now the organization's bucket is empty

    for (let i = 0; i < 2; i++) expect((await startAs(other, other.org.key)).status).toBe(200);
    expect(await originates(s)).toBe(3);
  });

  it("is told apart from the concurrent-call cap, and a call refused by the cap spends no token", async () => {
    const s = await setup("twilio");
    const stub = organizationStub(env, s.org.id);
    await stub.setCap(1);
    await stub.setRateLimits({ callStartsPerKey: { rate: 0.01, burst: 2 } });
    clock.set(Date.now());
    expect((await startAs(s, s.org.key)).status).toBe(200);
    const full = await startAs(s, s.org.key);
    expect(full.status).toBe(429);
    expect(full.json).toEqual({ detail: "Concurrent call limit reached" });
    await stub.setCap(5);
    expect((await startAs(s, s.org.key)).status).toBe(200); // the cap's refusal left the second token
    expectRateLimited(await startAs(s, s.org.key));
  });

  it("campaign dials are paced by the campaign, not charged to the call-start buckets", async () => {
    const s = await setup("twilio");
    const stub = organizationStub(env, s.org.id);
    await stub.setRateLimits({ callStartsPerOrg: { rate: 0.01, burst: 1 } });
    const id = campaignId();
    const campaign = await campaignObject(s, id, { enabled: false }, [{ row: 2, phone_number: "+14155550199", initial_context: {}, greeting_override: null }]);
    await campaign.start();
    for (let i = 0; i < 5 && (await originates(s)) === 0; i++) await runDurableObjectAlarm(campaign);
    expect(await originates(s)).toBe(1);
    clock.set(Date.now());
    // The campaign's dial left the organization's one token for a single call.
    expect((await startAs(s, s.org.key)).status).toBe(200);
    expectRateLimited(await startAs(s, s.org.key));
  });
});

describe("API requests per key", () => {
  it("burst + 1 rapid requests: 429 with Retry-After; another key and another organization are unaffected; allowed again later", async () => {
    const org = await createOrg();
    const other = await createOrg();
    const key2 = await secondKey(org);
    await organizationStub(env, org.id).setRateLimits({ requestsPerKey: { rate: 0.2, burst: 4 } });
    const t0 = Date.now();
    clock.set(t0);
    const list = (key: string) => call("GET", "/api/v1/workflow/fetch", { key });
    for (let i = 0; i < 4; i++) expect((await list(org.key)).status).toBe(200);
    expectRateLimited(await list(org.key), 5);
    // Every operation counts, writes too; the refused one did nothing.
    const refusedCreate = await call("POST", "/api/v1/organizations/api-keys", { key: org.key, body: { name: "x" } });
    expectRateLimited(refusedCreate, 5);
    expect((await call("GET", "/api/v1/organizations/api-keys", { key: key2 })).json.items.map((k: { name: string }) => k.name)).not.toContain("x");

    expect((await list(key2)).status).toBe(200);
    expect((await list(other.key)).status).toBe(200);

    clock.set(t0 + 4_000);
    expectRateLimited(await list(org.key), 1);
    clock.set(t0 + 5_000);
    expect((await list(org.key)).status).toBe(200);
    expectRateLimited(await list(org.key), 5);
  });

  it("a bad key is still 401 and a public path is not limited", async () => {
    const org = await createOrg();
    await organizationStub(env, org.id).setRateLimits({ requestsPerKey: { rate: 0.01, burst: 1 } });
    clock.set(Date.now());
    expect((await call("GET", "/api/v1/workflow/fetch", { key: org.key })).status).toBe(200);
    expectRateLimited(await call("GET", "/api/v1/workflow/fetch", { key: org.key }));
    expect((await call("GET", "/api/v1/workflow/fetch", { key: "edk_nope" })).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await call("GET", "/api/v1/health")).status).toBe(200);
  });
});

describe("API requests per key, in batches per isolate", () => {
  it("a busy key asks its organization's object once per batch; admissions, 429 and Retry-After stay the exact bucket's", async () => {
    const org = await createOrg();
    const stub = organizationStub(env, org.id);
    await stub.setRateLimits({ requestsPerKey: { rate: 10, burst: 100 } }); // batches of up to 10 (a second's worth)
    const t0 = Date.now();
    clock.set(t0);
    const list = () => call("GET", "/api/v1/workflow/fetch", { key: org.key });
    for (let i = 0; i < 50; i++) expect((await list()).status).toBe(200);
    // The object has lent this isolate tokens it has not spent yet: the bucket shows less than the 50 left.
    const seen = await stub.takeRequest(999_999_999); // another key: reads the limit without touching this one
    expect(maxRequestBatch(seen.limit)).toBe(10);
    // A quiet 1.1 s: the batch's unspent tokens expire here and go back with the next ask, so exactly
    // 50 + 11 requests pass, then 429 with the exact bucket's Retry-After.
    clock.set(t0 + 1_100);
    for (let i = 0; i < 61; i++) expect((await list()).status, `request ${i}`).toBe(200);
    expectRateLimited(await list(), 1);
    clock.set(t0 + 1_200);
    expect((await list()).status).toBe(200);
    expectRateLimited(await list(), 1);
  });

  it("the object grants at most a batch, never more than the bucket holds, and takes unspent tokens back up to the burst", async () => {
    const org = await createOrg();
    const stub = organizationStub(env, org.id);
    await stub.setRateLimits({ requestsPerKey: { rate: 20, burst: 25 } });
    clock.set(Date.now());
    const first = await stub.takeRequest(7, REQUEST_BATCH_MAX);
    expect([first.ok, first.granted, first.state.tokens]).toEqual([true, 20, 5]); // a second's worth: 20
    const second = await stub.takeRequest(7, REQUEST_BATCH_MAX);
    expect([second.ok, second.granted, second.state.tokens]).toEqual([true, 5, 0]); // what is left
    expectRefused(await stub.takeRequest(7, REQUEST_BATCH_MAX));
    const back = await stub.takeRequest(7, 1, 4); // four unspent tokens returned, one of them taken at once
    expect([back.ok, back.granted, back.state.tokens]).toEqual([true, 1, 3]);
    const capped = await stub.takeRequest(8, 1, 1_000); // a return never lifts the bucket past its burst
    expect(capped.state.tokens).toBe(24);
  });
});

describe("API requests per key, in parallel", () => {
  // Issue 39: parallel requests were refused well under the burst (5 of 30 with a burst of 100): requests that
  // reached the object while other requests' batches were in flight found it emptied by those batches, though the
  // isolate then held the tokens unspent.
  it("100 parallel requests against a burst of 100 all pass; the 101st is refused", async () => {
    const org = await createOrg();
    await organizationStub(env, org.id).setRateLimits({ requestsPerKey: { rate: 20, burst: 100 } });
    clock.set(Date.now()); // no refill while they run: exactly the burst
    const list = () => call("GET", "/api/v1/workflow/fetch", { key: org.key });
    const statuses = (await Promise.all(Array.from({ length: 100 }, list))).map((r) => r.status);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expectRateLimited(await list(), 1);
  });

  it("waves of parallel requests (a busy key whose batches are in flight) pass up to the burst, then 429", async () => {
    const org = await createOrg();
    await organizationStub(env, org.id).setRateLimits({ requestsPerKey: { rate: 20, burst: 100 } });
    clock.set(Date.now());
    const list = () => call("GET", "/api/v1/workflow/fetch", { key: org.key });
    expect((await list()).status).toBe(200); // the key is busy from here: the next asks are for batches
    const statuses: number[] = [];
    for (let wave = 0; wave < 9; wave++) statuses.push(...(await Promise.all(Array.from({ length: 11 }, list))).map((r) => r.status));
    // 1 + 99 admitted, then refusals only.
    expect(statuses.slice(0, 99).filter((s) => s !== 200)).toEqual([]);
    expectRateLimited(await list(), 1);
  });
});

describe("configuration", () => {
  it("Worker vars RATE,BURST set the limits; empty or invalid ones are the defaults", () => {
    expect(rateLimitsOf({ RATE_LIMIT_CALL_STARTS_PER_ORG: "3,7", RATE_LIMIT_CALL_STARTS_PER_KEY: "", RATE_LIMIT_REQUESTS_PER_KEY: "lots" })).toEqual({
      callStartsPerOrg: { rate: 3, burst: 7 },
      callStartsPerKey: DEFAULT_RATE_LIMITS.callStartsPerKey,
      requestsPerKey: DEFAULT_RATE_LIMITS.requestsPerKey,
    });
    expect(rateLimitsOf({})).toEqual(DEFAULT_RATE_LIMITS);
  });

  it("an organization's override persists and null restores the deployment's limits", async () => {
    const org = await createOrg();
    const stub = organizationStub(env, org.id);
    await stub.setRateLimits({ requestsPerKey: { rate: 0.01, burst: 1 } });
    clock.set(Date.now());
    expect((await stub.takeRequest(1)).ok).toBe(true);
    expect((await stub.takeRequest(1)).ok).toBe(false);
    await stub.setRateLimits(null);
    const d = await stub.takeRequest(1);
    expect(d.ok).toBe(true);
    expect(d.limit).toEqual(rateLimitsOf(env).requestsPerKey);
  });
});
