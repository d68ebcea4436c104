// IANA time-zone names as the runtime knows them.

/** Whether the runtime knows `tz` as a time zone (an IANA name such as America/New_York, or UTC). */
export function isValidTimeZone(tz: string): boolean {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
