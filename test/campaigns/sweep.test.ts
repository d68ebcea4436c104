// The cron's sweep of abandoned imports: a hidden `creating` row older than ABANDONED_IMPORT_AGE_MS loses its row and its
// object's storage; a fresh import and campaigns in every visible state are left alone.
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { CampaignObject } from "../../src/campaigns/campaign-object";
import { ABANDONED_IMPORT_AGE_MS, sweepAbandonedImports } from "../../src/campaigns/sweep";
import { CAMPAIGN_STATES, CREATING } from "../../src/campaigns/view";
import { clock } from "../../src/lib/clock";
import { T0, campaignStub, sqlOf } from "./engine-harness";
import { seedCampaign, setupOrg, type OrgWorld } from "./support";

const MINUTE = 60_000;

beforeEach(() => clock.set(T0));
afterEach(() => {
  vi.restoreAllMocks();
  clock.set(null);
});

/** A D1 summary row in `state`, created `ageMs` before the clock, and its object holding `n` contacts. Unless the
 *  row is `creating`, the import is finished, as create leaves it (the sweep reads only the D1 row's state). */
async function campaign(o: OrgWorld, state: string, ageMs: number, n = 3) {
  const createdAt = new Date(clock.now() - ageMs).toISOString();
  const { id } = await seedCampaign(o, { n, name: `sweep ${state}`, createdAt, finish: state !== CREATING });
  // Set last: finishing the import writes the object's own summary (a draft) over the row.
  await env.DB.prepare("UPDATE campaigns SET state = ? WHERE id = ?").bind(state, id).run();
  return id;
}

const rowState = async (id: number) => (await env.DB.prepare("SELECT state FROM campaigns WHERE id = ?").bind(id).first<{ state: string }>())?.state ?? null;
const contactCount = async (id: number) => (await sqlOf<{ n: number }>(campaignStub(id), "SELECT COUNT(*) AS n FROM contacts"))[0].n;

describe("sweep of abandoned imports (the cron)", () => {
  it("removes an old importing row and empties its object; fresh imports and visible campaigns are untouched", async () => {
    const o = await setupOrg();
    const old = await campaign(o, CREATING, ABANDONED_IMPORT_AGE_MS + MINUTE);
    const fresh = await campaign(o, CREATING, 10 * MINUTE);
    // Every visible state, each far older than the cutoff.
    const visible = new Map<string, number>();
    for (const state of CAMPAIGN_STATES) visible.set(state, await campaign(o, state, 30 * 24 * 60 * MINUTE));
    expect(await contactCount(old)).toBe(3);

    const result = await sweepAbandonedImports(env, clock.now());

    expect(result.removed).toContain(old);
    expect(result.failed).toEqual([]);
    expect(await rowState(old)).toBeNull();
    expect(await contactCount(old)).toBe(0);
    expect((await sqlOf(campaignStub(old), "SELECT * FROM campaign")).length).toBe(0);

    expect(result.removed).not.toContain(fresh);
    expect(await rowState(fresh)).toBe(CREATING);
    expect(await contactCount(fresh)).toBe(3);
    for (const [state, id] of visible) {
      expect(result.removed).not.toContain(id);
      expect(await rowState(id)).toBe(state);
      expect(await contactCount(id)).toBe(3);
    }

    // Once the fresh import is past the safe age too, the next run takes it.
    clock.advance(ABANDONED_IMPORT_AGE_MS);
    expect((await sweepAbandonedImports(env, clock.now())).removed).toContain(fresh);
    expect(await rowState(fresh)).toBeNull();
    expect(await contactCount(fresh)).toBe(0);
  });

  it("runs from the Worker's scheduled export", async () => {
    const o = await setupOrg();
    const old = await campaign(o, CREATING, 2 * ABANDONED_IMPORT_AGE_MS);
    const draft = await campaign(o, "draft", 2 * ABANDONED_IMPORT_AGE_MS);

    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now(), cron: "*/15 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);

    expect(await rowState(old)).toBeNull();
    expect(await contactCount(old)).toBe(0);
    expect(await rowState(draft)).toBe("draft");
    expect(await contactCount(draft)).toBe(3);
  });

  it("a failing discard is logged and skipped: the rest are swept, and the failed row stays for the next run", async () => {
    const o = await setupOrg();
    const first = await campaign(o, CREATING, 2 * ABANDONED_IMPORT_AGE_MS);
    const second = await campaign(o, CREATING, 2 * ABANDONED_IMPORT_AGE_MS);
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const real = CampaignObject.prototype.discard;
    vi.spyOn(CampaignObject.prototype, "discard").mockImplementation(async function (this: CampaignObject) {
      const campaignId = this.ctx.storage.sql.exec<{ id: number }>("SELECT campaign_id AS id FROM campaign").toArray()[0]?.id;
      if (campaignId === first) throw new Error("storage unavailable");
      return real.call(this);
    });

    const result = await sweepAbandonedImports(env, clock.now());
    expect(result.failed).toEqual([first]);
    expect(result.removed).toContain(second);
    expect(await rowState(first)).toBe(CREATING);
    expect(await rowState(second)).toBeNull();
    expect(await contactCount(second)).toBe(0);
    expect(errors.mock.calls.some(([line]) => String(line).includes("abandoned_import_sweep_failed") && String(line).includes(String(first)))).toBe(true);

    vi.mocked(CampaignObject.prototype.discard).mockRestore();
    expect((await sweepAbandonedImports(env, clock.now())).removed).toContain(first);
    expect(await rowState(first)).toBeNull();
    expect(await contactCount(first)).toBe(0);
  });
});
