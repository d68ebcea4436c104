// Issue 7 "Bad input" against the simulator: a carrier that never answers (the run fails with our timeout
// message, the caller gets 502, nothing is retried, a campaign attempt is a carrier failure and is not
// re-dialled), and callbacks that are genuinely signed but stale, or replayed after another final status.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { clock } from "../../src/lib/clock";
import type { ProviderName } from "../../src/telephony/providers/types";
import { call } from "../helpers";
import {
  CALLEE,
  campaignObject,
  deliver,
  deliverAll,
  drain,
  ONCE_ONLY,
  play,
  redeliver,
  runRow,
  setup,
  simHang,
  simRequests,
  type Recorded,
  type Setup,
  CONTEXT,
  LABEL,
} from "./support";
import { unwrap } from "../../src/campaigns/errors";

/** The pool's carrier timeout (vitest.config.ts); the simulator hangs well past it. */
const TIMEOUT_MS = Number((env as unknown as { CARRIER_TIMEOUT_MS?: string }).CARRIER_TIMEOUT_MS);
const TIMED_OUT = `request timed out after ${TIMEOUT_MS / 1000} s`;
const HANG_MS = TIMEOUT_MS + 3000;

/** Requests that place a call (provisioning on save also POSTs, to application endpoints). */
const originates = (reqs: Recorded[]) => reqs.filter((r) => r.method === "POST" && !/Application|call_control_applications|applications/.test(r.path));

afterEach(() => clock.set(null));

describe("a carrier that does not answer in time", () => {
  const providers: ProviderName[] = ["twilio", "plivo", "vobiz", "telnyx", "vonage", "cloudonix", "exotel", "ari"];

  it("answers 502 with the timeout message, keeps the run failed with it, and asks the carrier once", { timeout: 60_000 }, async () => {
    expect(TIMEOUT_MS).toBeGreaterThan(0);
    const setups = await Promise.all(providers.map((p) => setup(p)));
    await Promise.all(setups.map((s) => simHang(s.acct, "originate", HANG_MS)));
    const started = Date.now();
    // In parallel: each waits out the timeout, so the test costs one timeout, not eight.
    const results = await Promise.all(
      setups.map((s) =>
        call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: CONTEXT } }),
      ),
    );
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(took, "gave up at our timeout, before the carrier answered").toBeLessThan(HANG_MS);
    for (const [i, s] of setups.entries()) {
      const p = providers[i];
      expect(results[i].status, `${p}: ${results[i].text}`).toBe(502);
      // The message names the carrier that did not answer; a PBX (the client's own host) gets the one message every
      // network failure gets, so a timeout cannot be told from a refused port.
      const said = p === "ari" ? "Could not reach the PBX" : `${LABEL[p]} ${TIMED_OUT}`;
      expect(results[i].json, p).toEqual({ detail: said });
      const runs = (await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key })).json.items;
      expect(runs, p).toHaveLength(1);
      expect(runs[0], p).toMatchObject({ status: "failed", error: said, provider_call_id: null });
      expect(runs[0].ended_at, p).not.toBeNull();
      // Exactly one originate reached the carrier: no blind retry after the timeout.
      expect(originates(await simRequests(s.acct)), p).toHaveLength(1);
    }
  });

  it("a campaign attempt that times out is a carrier failure, and the contact is not dialled again", { timeout: 60_000 }, async () => {
    const s = await setup("twilio");
    await simHang(s.acct, "originate", HANG_MS);
    const id = 800_000 + Math.floor(Math.random() * 90_000);
    // Retries on: a timeout must still not be re-dialled (the carrier may have placed the call).
    const stub = await campaignObject(s, id, { enabled: true, max_retries: 3, retry_delay_seconds: 0 }, [
      { row: 2, phone_number: CALLEE, initial_context: {}, greeting_override: null },
    ]);
    await stub.start();
    const campaignRuns = () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    for (let i = 0; i < 5 && (await campaignRuns()).every((r) => r.status !== "failed"); i++) await runDurableObjectAlarm(stub);

    const runs = await campaignRuns();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", error: `Twilio ${TIMED_OUT}`, attempt: 1, providerCallId: null });
    // Later alarms (and any retry timer) place nothing new.
    for (let i = 0; i < 3; i++) await runDurableObjectAlarm(stub);
    expect(originates(await simRequests(s.acct))).toHaveLength(1);
    expect(await campaignRuns()).toHaveLength(1);
    const progress = unwrap(await stub.progress());
    expect(progress).toMatchObject({ state: "completed", failed: 1, failed_calls: 1, pending: 0, processed: 1 });
    // The contact's outcome is the carrier failure itself (`failed`, a breaker failure), not an unknown.
    expect(unwrap(await stub.redialPlan(["failed"])).count).toBe(1);
    expect(unwrap(await stub.redialPlan(["unknown"])).count).toBe(0);
    // The engine's lease came back.
    const { organizationStub } = await import("../../src/organizations/organization-object");
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(0);
  });
});

describe("stale and replayed callbacks", () => {
  // Carriers whose signature covers a time: Telnyx's timestamp header, Vonage's JWT iat.
  it.each(["telnyx", "vonage"] as const)("%s: a genuine callback presented more than 300 s later is refused and changes nothing", async (provider) => {
    const s = await setup(provider);
    const runId = (
      await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: CONTEXT } })
    ).json.workflow_run_id as number;
    const before = await runRow(runId);
    const final = (await play(before.providerCallId!, "busy")).filter((c) => c.kind === "status").at(-1)!;
    clock.set(Date.now() + 301_000);
    const late = await deliver(final);
    expect(late.status, late.text).toBe(403);
    expect(await runRow(runId)).toEqual(before);
    // The same bytes inside the window are accepted: it was the age that was refused, not the signature.
    clock.set(null);
    expect((await deliver(final)).status).toBeLessThan(300);
    expect((await runRow(runId)).status).toBe("busy");
  });

  it.each(["twilio", "plivo", "vobiz", "telnyx", "vonage", "cloudonix", "exotel"] as const)(
    "%s: a valid signed final callback replayed after another final status changes nothing",
    async (provider) => {
      const s: Setup = await setup(provider);
      const runId = (
        await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: CONTEXT } })
      ).json.workflow_run_id as number;
      const callId = (await runRow(runId)).providerCallId!;
      const busy = (await play(callId, "busy")).filter((c) => c.kind === "status");
      const noAnswer = (await play(callId, "no_answer")).filter((c) => c.kind === "status");
      await deliverAll(busy);
      await drain(callId);
      const done = await runRow(runId);
      expect(done.status).toBe("busy");
      // Another genuine final status, then the carrier's retry of the first final (signed afresh where its
      // deliveries are once-only): accepted (so the carrier stops retrying), ignored.
      for (const cb of [noAnswer.at(-1)!, await redeliver(callId, busy.at(-1)!)]) {
        const r = await deliver(cb);
        expect(r.status, r.text).toBeLessThan(300);
        expect(await runRow(runId)).toEqual(done);
      }
      // The very same bytes again: a replay where deliveries are once-only (403), else accepted and ignored.
      const again = await deliver(noAnswer.at(-1)!);
      if (ONCE_ONLY.has(provider)) expect(again.status, again.text).toBe(403);
      else expect(again.status, again.text).toBeLessThan(300);
      expect(await runRow(runId)).toEqual(done);
    },
  );
});
