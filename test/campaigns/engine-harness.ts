// Test support for the campaign engine: a controllable clock, a fake carrier behind the call-starter seam, and a
// driver that moves time only through alarms (runDurableObjectAlarm) and the clock. No real sleeps, no real timers.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import type { ContactInput } from "../../src/campaigns/engine/object-api";
import type { CallStartResult, CampaignCallRequest } from "../../src/calls/campaign/campaign-calls";
import type { SettingsPatch } from "../../src/campaigns/engine/types";
import { DEFAULT_SETTINGS, type CampaignSettings } from "../../src/campaigns/engine/settings";
import { clock } from "../../src/lib/clock";
import { testCampaignId } from "../campaign-ids";
import type { CallStatus } from "../../src/telephony/providers/types";

/** Far enough ahead of the real clock that no alarm fires on its own during a test. */
export const T0 = Date.parse("2030-01-07T10:00:00Z"); // a Monday

export type CampaignStub = DurableObjectStub<import("../../src/campaigns/campaign-object").CampaignObject>;

export const uniqueId = testCampaignId;

export const campaignStub = (id: number): CampaignStub => env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
export const orgStub = (orgId: number) => env.ORGANIZATION.get(env.ORGANIZATION.idFromName(String(orgId)));

export type Started = { req: CampaignCallRequest; at: number; runId: number };
type Decide = (req: CampaignCallRequest) => CallStartResult | "hang" | "throw" | Promise<CallStartResult>;

/** The carrier double: every start is recorded; by default it accepts, and the test reports the outcomes. */
export class FakeCarrier {
  started: Started[] = [];
  private nextRun = 1;
  decide: Decide = () => ({ ok: true, runId: 0, providerCallId: null });

  install(): this {
    setCallStarter(async (_env, req) => {
      const runId = this.nextRun++;
      this.started.push({ req, at: clock.now(), runId });
      const d = this.decide(req);
      if (d === "hang") return new Promise<CallStartResult>(() => undefined);
      if (d === "throw") throw new Error("carrier exploded");
      const r = await d;
      return r.ok ? { ...r, runId, providerCallId: r.providerCallId ?? `call-${runId}` } : { ...r, runId: r.runId ?? runId };
    });
    return this;
  }

  /** Calls started for a campaign and not yet reported final by the test. */
  open(campaignId: number): Started[] {
    return this.started.filter((s) => s.req.campaignId === campaignId && !this.ended.has(s.runId));
  }

  ended = new Set<number>();

  /** Reports a status for a started call to its campaign (as the calls module would). */
  async report(s: Started, status: CallStatus, at = clock.now()) {
    if (["completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"].includes(status)) this.ended.add(s.runId);
    return campaignStub(s.req.campaignId).onCallStatus({
      runId: s.runId,
      contactId: s.req.contactId,
      attempt: s.req.attempt,
      status,
      at: new Date(at).toISOString(),
    });
  }

  dialsOf(campaignId: number, phone: string): Started[] {
    return this.started.filter((s) => s.req.campaignId === campaignId && s.req.phoneNumber === phone);
  }
}

export function resetWorld(): FakeCarrier {
  clock.set(T0);
  return new FakeCarrier().install();
}

export const phone = (i: number) => `+1415555${String(i).padStart(4, "0")}`;
export const contacts = (n: number, from = 0): ContactInput[] =>
  Array.from({ length: n }, (_, i) => ({
    row: i + 2 + from,
    phone_number: phone(i + from),
    initial_context: { i: String(i + from) },
    greeting_override: null,
  }));

/** `rows`: the contacts themselves (instead of `contacts` generated ones). */
export type MakeOpts = { contacts?: number; rows?: ContactInput[]; settings?: SettingsPatch; orgId?: number; start?: boolean };

/** A campaign object with `n` contacts, imported, optionally started. */
export async function makeCampaign(opts: MakeOpts = {}): Promise<{ id: number; orgId: number; stub: CampaignStub }> {
  const id = uniqueId();
  const orgId = opts.orgId ?? uniqueId();
  const stub = campaignStub(id);
  await stub.initialize({
    campaignId: id,
    orgId,
    name: `campaign ${id}`,
    workflowId: 1,
    telephonyConfigurationId: 1,
    sourceId: "campaigns/test.csv",
    // Nested objects may be partial: the object completes them with the defaults.
    settings: { ...DEFAULT_SETTINGS, ...opts.settings } as CampaignSettings,
  });
  const all = opts.rows ?? contacts(opts.contacts ?? 3);
  for (let i = 0; i < all.length; i += 1000) await stub.importContacts(all.slice(i, i + 1000));
  await stub.finishImport();
  if (opts.start) await stub.start();
  return { id, orgId, stub };
}

export const alarmAt = (stub: CampaignStub) => runInDurableObject(stub, (_i, state) => state.storage.getAlarm());

/** Runs campaign `id`'s due alarms one at a time (an import's slices); returns how many ran. */
export async function drain(id: number, max = 200): Promise<number> {
  let ran = 0;
  while (ran < max) {
    const at = await alarmAt(campaignStub(id));
    if (at == null || at > clock.now()) break;
    await runDurableObjectAlarm(campaignStub(id));
    ran++;
  }
  return ran;
}

// The driver's loops are bounded so that a bug fails a test in seconds: a per-test time limit cannot stop them (each
// step awaits the worker, and an alarm that keeps re-arming at the same instant never lets the clock move on).
/** An alarm still due after it ran, this many times in a row with nothing in the object changed, is a loop. */
export const STUCK_ALARM_RUNS = 20;
/** A fuse: at most this many alarm runs at one instant in one tick (real work at one instant takes far fewer). */
export const MAX_ALARM_RUNS_AT_ONE_INSTANT = 2000;
/** A fuse: advance() gives up after this much wall time. */
export const ADVANCE_WALL_MS = 60_000;

/** What an alarm run could have changed: the timers, the contacts by status, the attempts by status. */
const progressOf = (stub: CampaignStub) =>
  runInDurableObject(stub, (_i, state) => {
    const q = (sql: string) => state.storage.sql.exec(sql).toArray();
    return JSON.stringify([
      q("SELECT kind, ref, due, fails FROM timers ORDER BY kind, ref"),
      q("SELECT status, count(*) AS n, sum(attempts) AS a FROM contacts GROUP BY status ORDER BY status"),
      q("SELECT status, count(*) AS n FROM attempts GROUP BY status ORDER BY status"),
      q("SELECT state, window_open FROM campaign"),
    ]);
  });

/** Runs every alarm due at the current clock (alarms scheduled for later are left alone); fails fast on an alarm loop. */
export async function tick(...stubs: CampaignStub[]): Promise<number> {
  let ran = 0;
  const seen = new Map<CampaignStub, { state: string; same: number }>();
  for (let guard = 0; guard < MAX_ALARM_RUNS_AT_ONE_INSTANT; guard++) {
    let any = false;
    for (const stub of stubs) {
      const at = await alarmAt(stub);
      if (at != null && at <= clock.now()) {
        await runDurableObjectAlarm(stub);
        ran++;
        any = true;
        const again = await alarmAt(stub);
        if (again == null || again > clock.now()) continue;
        // Due again at once: fine while it gets somewhere (an import slice, a bounded dispatch loop), a loop if not.
        const state = await progressOf(stub);
        const prev = seen.get(stub);
        const same = prev?.state === state ? prev.same + 1 : 0;
        if (same >= STUCK_ALARM_RUNS)
          throw new Error(`alarm loop at ${new Date(clock.now()).toISOString()}: due again ${same} times at once with nothing changed: ${state}`);
        seen.set(stub, { state, same });
      }
    }
    if (!any) return ran;
  }
  const state = await Promise.all(stubs.map((s) => sqlOf(s, "SELECT * FROM timers ORDER BY due LIMIT 5")));
  throw new Error(`alarms keep firing at ${clock.now()}: ${JSON.stringify(state)}`);
}

/** Moves the clock forward by `ms`, stopping at each alarm on the way (in time order) to run it. */
export async function advance(ms: number, ...stubs: CampaignStub[]): Promise<void> {
  const target = clock.now() + ms;
  const deadline = Date.now() + ADVANCE_WALL_MS;
  for (let guard = 0; guard < 100_000; guard++) {
    await tick(...stubs);
    const times = (await Promise.all(stubs.map(alarmAt))).filter((t): t is number => t != null && t <= target);
    if (!times.length) break;
    if (Date.now() > deadline)
      throw new Error(`advance(${ms}) still running after ${ADVANCE_WALL_MS / 1000} s of wall time, at ${new Date(clock.now()).toISOString()}`);
    clock.set(Math.max(clock.now(), Math.min(...times)));
  }
  clock.set(target);
  await tick(...stubs);
}

export const sqlOf = <T extends Record<string, SqlStorageValue>>(stub: CampaignStub, q: string, ...b: unknown[]) =>
  runInDurableObject(stub, (_i, state) => state.storage.sql.exec<T>(q, ...b).toArray());

/** The message an RPC rejects with (awaited directly: `.rejects` on RPC promises reports them as unhandled). */
export async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    // The object answers its refusals as values (src/campaigns/errors.ts); a raw stub hands them over as such.
    const r = (await p) as { ok?: boolean; status?: number; detail?: string } | null;
    if (r?.ok === false) return `[${r.status}] ${r.detail}`;
  } catch (err) {
    return (err as Error).message;
  }
  return "(resolved)";
}

export type CallPlan = { durationMs: number; outcome: CallStatus } | null; // null: never report (times out)

/**
 * An event-driven run: the clock jumps to the next alarm or the next call end, whichever comes first, until
 * `untilMs` or until `stop()` says so. Each started call is planned once by `plan` (duration and outcome).
 * `check` runs after every event, so invariants hold at every step.
 */
export async function simulate(
  carrier: FakeCarrier,
  stubs: CampaignStub[],
  opts: { untilMs: number; plan: (s: Started) => CallPlan; check?: () => Promise<void> | void; stop?: () => Promise<boolean> | boolean },
): Promise<void> {
  const ends = new Map<number, { at: number; s: Started; outcome: CallStatus }>();
  const planned = new Set<number>();
  const schedule = () => {
    for (const s of carrier.started) {
      if (planned.has(s.runId)) continue;
      planned.add(s.runId);
      const p = opts.plan(s);
      if (p) ends.set(s.runId, { at: s.at + p.durationMs, s, outcome: p.outcome });
    }
  };
  for (let guard = 0; guard < 200_000; guard++) {
    await tick(...stubs);
    schedule();
    if (opts.check) await opts.check();
    if (opts.stop && (await opts.stop())) return;
    const alarms = (await Promise.all(stubs.map(alarmAt))).filter((t): t is number => t != null);
    const nextEnd = Math.min(...[...ends.values()].map((e) => e.at), Infinity);
    const next = Math.min(...alarms, nextEnd);
    if (!Number.isFinite(next) || next > opts.untilMs) {
      clock.set(Math.max(clock.now(), opts.untilMs));
      await tick(...stubs);
      return;
    }
    clock.set(Math.max(clock.now(), next));
    for (const [runId, e] of [...ends]) {
      if (e.at > clock.now()) continue;
      ends.delete(runId);
      await carrier.report(e.s, e.outcome);
      schedule();
      if (opts.check) await opts.check();
    }
  }
  throw new Error("simulation did not settle");
}
