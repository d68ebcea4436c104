// Which queued contacts may be called now by their own clock. Each contact gets a zone once (its `timezone` column,
// else its number's zones); each zone's state under the organization's local hours is kept with the instant it
// next changes, so a dispatch round filters by zone in SQL and wakes when the first held zone opens.
import type { DoSql } from "../../lib/do-sql";
import { isValidTimeZone } from "../../lib/time-zones";
import type { LocalHoursConfig } from "../../telephony/calling-rules";
import { numberZoneKey } from "../../telephony/number-zones";
import { ZoneHours } from "./local-hours";
import type { CampaignLog } from "./logs";
import { iso } from "../../lib/helpers";

export const RECIPIENT_HOURS_MIGRATION = [
  // key: IANA zones joined by `&` ("" = not judged). fresh = 0: to be computed (new, or the hours changed).
  `CREATE TABLE zones (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, open INTEGER NOT NULL DEFAULT 1, change_at INTEGER, fresh INTEGER NOT NULL DEFAULT 0)`,
  `ALTER TABLE contacts ADD COLUMN zone_id INTEGER`,
  `CREATE INDEX contacts_zone ON contacts (status, zone_id)`,
  // Dials the calling rules skipped, by reason.
  `CREATE TABLE rule_skips (reason TEXT PRIMARY KEY, n INTEGER NOT NULL)`,
];

const ASSIGN_BATCH = 500;
/** Contacts kept with their zone ahead of dispatch (assignAhead), so a round rarely has to give zones out itself. */
const ZONED_AHEAD = 1000;

type ZoneRow = { id: number; key: string; open: number; change_at: number | null };

export class RecipientHours {
  /** The hours the zones were computed under (memory only: a new instance computes them once again). */
  private hoursJson = "";

  constructor(
    private readonly db: DoSql,
    private readonly log: CampaignLog,
  ) {}

  /** Gives up to `limit` queued contacts (in queue order) their zone; returns how many it gave one. */
  assign(limit = ASSIGN_BATCH): number {
    const rows = this.db.all<{ id: number; phone_number: string; tz: string | null }>`SELECT id, phone_number, initial_context->>'timezone' AS tz
      FROM contacts WHERE status = 'queued' AND zone_id IS NULL ORDER BY queue_key, id LIMIT ${limit}`;
    if (!rows.length) return 0;
    const ids = new Map<string, ZoneRow>();
    // [contact id, zone id] pairs, written by one statement: a statement per contact was most of the engine's
    // statements per call.
    const pairs: [number, number][] = [];
    let closed = 0;
    this.db.tx(() => {
      for (const r of rows) {
        // A contact's own zone wins; one the runtime does not know falls back to the number's.
        const key = r.tz && isValidTimeZone(r.tz) ? r.tz : numberZoneKey(r.phone_number);
        let zone = ids.get(key);
        if (!zone) {
          this.db.run`INSERT INTO zones (key) VALUES (${key}) ON CONFLICT (key) DO NOTHING`;
          zone = this.db.one<ZoneRow>`SELECT id, key, open, change_at FROM zones WHERE key = ${key}`!;
          ids.set(key, zone);
        }
        pairs.push([r.id, zone.id]);
        if (!zone.open) closed++;
      }
      this.db.run`UPDATE contacts SET zone_id = j.value ->> 1 FROM json_each(${JSON.stringify(pairs)}) AS j WHERE contacts.id = j.value ->> 0`;
      if (closed) this.countSkip("local_hours", closed);
    });
    return rows.length;
  }

  /**
   * Off the dial path (the alarm): gives the next queued contacts their zone while fewer than ZONED_AHEAD have one,
   * a batch at a time, so a status batch's round finds them ready rather than writing zones before it may ask for
   * its leases.
   */
  assignAhead(): void {
    const zoned =
      this.db.value<number>`SELECT count(*) FROM (SELECT 1 FROM contacts WHERE status = 'queued' AND zone_id IS NOT NULL LIMIT ${ZONED_AHEAD})` ?? 0;
    if (zoned < ZONED_AHEAD) this.assign();
  }

  /**
   * Brings each zone's state up to `now` (all of them when the hours changed), logging a zone that closes on
   * contacts waiting in it; returns the next instant a closed zone opens (null: none will within a week).
   */
  refresh(now: number, hours: LocalHoursConfig): number | null {
    const json = JSON.stringify(hours);
    if (json !== this.hoursJson) {
      this.db.run`UPDATE zones SET fresh = 0`;
      this.hoursJson = json;
    }
    const stale = this.db.all<ZoneRow>`SELECT id, key, open, change_at FROM zones WHERE fresh = 0 OR change_at <= ${now}`;
    for (const z of stale) {
      const { open, change } = new ZoneHours(z.key, hours).at(now);
      this.db.run`UPDATE zones SET open = ${open ? 1 : 0}, change_at = ${change}, fresh = 1 WHERE id = ${z.id}`;
      if (open || !z.open) continue;
      const held = this.db.value<number>`SELECT count(*) FROM contacts WHERE status = 'queued' AND zone_id = ${z.id}` ?? 0;
      if (!held) continue;
      this.countSkip("local_hours", held);
      this.log.write(
        "info",
        "local_hours_wait",
        change
          ? `${held} contact(s) in ${z.key} are outside their local hours; their calls wait until ${iso(change)}`
          : `${held} contact(s) in ${z.key} have no local hours in common; their calls wait until the hours change`,
        { reason: "local_hours", zone: z.key, contacts: held, opens_at: change ? iso(change) : null, start: hours.start, end: hours.end },
      );
    }
    return this.db.value<number>`SELECT min(change_at) FROM zones WHERE open = 0`;
  }

  /** Contacts ready to call but outside their local hours now. */
  held(): number {
    return this.db.value<number>`SELECT count(*) FROM contacts WHERE status = 'queued' AND zone_id IN (SELECT id FROM zones WHERE open = 0)` ?? 0;
  }

  countSkip(reason: string, n: number): void {
    this.db.run`INSERT INTO rule_skips (reason, n) VALUES (${reason}, ${n}) ON CONFLICT (reason) DO UPDATE SET n = n + excluded.n`;
  }

  skips(): Record<string, number> {
    return Object.fromEntries(this.db.all<{ reason: string; n: number }>`SELECT reason, n FROM rule_skips ORDER BY reason`.map((r) => [r.reason, r.n]));
  }
}
