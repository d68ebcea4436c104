// The organization's calling rules as dispatch reads them: from D1 at most once a minute. Once known, a stale copy
// serves the round while one re-read runs beside it, so a D1 read never holds up a dial (a change applies within a
// minute and one read); the last known (or the defaults) when D1 fails.
import { clock } from "../../lib/clock";
import { getDb } from "../../lib/db";
import { loadCallingRules } from "../../telephony/calling-policy";
import { defaultRules, type CallingRules } from "../../telephony/calling-rules";
import type { CampaignRow } from "./campaign-row";
import { log } from "../../lib/log";

/** How long the calling rules read from D1 are used before they are read again. */
const RULES_TTL_MS = 60_000;

export class RulesCache {
  private rules: { at: number; value: CallingRules } | null = null;
  private reading: Promise<CallingRules> | null = null;

  constructor(private readonly env: Env) {}

  async get(c: CampaignRow): Promise<CallingRules> {
    const now = clock.now();
    const known = this.rules;
    if (known && now - known.at < RULES_TTL_MS && now >= known.at) return known.value;
    this.reading ??= this.read(c, now).finally(() => {
      this.reading = null;
    });
    return known ? known.value : await this.reading;
  }

  private async read(c: CampaignRow, now: number): Promise<CallingRules> {
    let value = this.rules?.value ?? defaultRules(this.env);
    try {
      value = await loadCallingRules(getDb(this.env), c.org_id, defaultRules(this.env));
    } catch (err) {
      log("warning", "calling_rules_unreadable", { campaign_id: c.campaign_id, error: String(err) });
    }
    this.rules = { at: now, value };
    return value;
  }
}
