// bench/dispatch: the edgedial Worker with an instant simulated carrier behind the engine's call-starter seam.
// The carrier accepts every call and its final status comes straight back to the campaign object over RPC, as the
// calls module forwards callbacks. Bench-only routes create and observe a campaign; everything else is the app.
import { app } from "../../src/app";
import { CampaignObject as EngineCampaignObject } from "../../src/campaigns/campaign-object";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import type { CampaignCallStatus } from "../../src/calls/campaign-calls";
import { DEFAULT_SETTINGS } from "../../src/campaigns/settings";

// Every Durable Object class of the Worker (this module's own CampaignObject takes precedence over the star export).
export * from "../../src/index";

type Stats = { dials: number[] };
const byCampaign = new Map<number, Stats>();
const statsOf = (id: number) => byCampaign.get(id) ?? (byCampaign.set(id, { dials: [] }).get(id) as Stats);
let runSeq = 0;

setCallStarter(async (env, req) => {
  statsOf(req.campaignId).dials.push(Date.now());
  const runId = ++runSeq;
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(req.campaignId)));
  const status: CampaignCallStatus = { runId, contactId: req.contactId, attempt: req.attempt, status: "completed", at: new Date().toISOString() };
  // The instant carrier: the call is answered and over before anyone could blink; its status arrives as a callback.
  void stub.onCallStatus(status).catch((err: unknown) => console.error("status failed", String(err)));
  return { ok: true, runId, providerCallId: `bench-${runId}` };
});

const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : null);

/** The engine's object plus two bench probes: when final statuses arrive, and the figures at the end. */
export class CampaignObject extends EngineCampaignObject {
  private finals: number[] = [];

  async onCallStatus(s: CampaignCallStatus) {
    this.finals.push(Date.now());
    return super.onCallStatus(s);
  }

  async benchStats() {
    const snap = await this.snapshot();
    const stats = { dials: statsOf(snap.id).dials, finals: this.finals };
    // For each final status, the wait until the next dial after it (while contacts were left to dial).
    const delays: number[] = [];
    let j = 0;
    const dials = [...stats.dials].sort((a, b) => a - b);
    for (const f of [...stats.finals].sort((a, b) => a - b)) {
      while (j < dials.length && dials[j] < f) j++;
      if (j < dials.length) delays.push(dials[j] - f);
    }
    delays.sort((a, b) => a - b);
    const events: Record<string, number> = {};
    for (let before: number | null = null; ; ) {
      const page = await this.logs(100, before);
      for (const l of page.items) events[l.event] = (events[l.event] ?? 0) + 1;
      if (page.next_before == null) break;
      before = page.next_before;
    }
    return {
      events,
      instanceFinals: this.finals.length,
      state: snap.state,
      counts: snap.counts,
      dials: stats.dials.length,
      finals: stats.finals.length,
      firstDial: dials[0] ?? null,
      lastDial: dials[dials.length - 1] ?? null,
      delay: { n: delays.length, p50: pct(delays, 50), p99: pct(delays, 99), max: delays[delays.length - 1] ?? null },
    };
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/bench/start" && request.method === "POST") {
      const o = (await request.json()) as { campaignId: number; orgId: number; contacts: number; maxConcurrency: number; rateLimit: number };
      const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(o.campaignId)));
      await stub.initialize({
        campaignId: o.campaignId,
        orgId: o.orgId,
        name: "bench",
        workflowId: 1,
        telephonyConfigurationId: 1,
        sourceId: "bench",
        // rate_limit may be set above the API's 50/s here, so the engine rather than the pacer is what is measured.
        settings: { ...DEFAULT_SETTINGS, max_concurrency: o.maxConcurrency, rate_limit: o.rateLimit },
      });
      for (let i = 0; i < o.contacts; i += 1000) {
        const chunk = Array.from({ length: Math.min(1000, o.contacts - i) }, (_, k) => ({
          row: i + k + 2,
          phone_number: `+1202${String(5_000_000 + i + k).padStart(7, "0")}`,
          initial_context: { first_name: `Contact ${i + k}` },
          greeting_override: null,
        }));
        await stub.importContacts(chunk);
      }
      await stub.finishImport();
      await stub.start();
      return Response.json({ ok: true });
    }
    if (url.pathname === "/bench/stats") {
      const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(url.searchParams.get("id")!));
      return Response.json(await stub.benchStats());
    }
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
