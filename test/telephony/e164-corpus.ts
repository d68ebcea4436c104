// A deterministic corpus of phone-number strings across every calling code: example numbers of every region (valid),
// their neighbours differing in the last digits (the classes the E.164 cache shares answers across, valid and
// not), random digits, lengths off by one, and the same numbers written nationally or with spaces, dashes, dots
// and parentheses. Seeded, so a failure names a reproducible input.
import { getCountries, getCountryCallingCode, getExampleNumber, type CountryCode } from "libphonenumber-js/max";
import examples from "libphonenumber-js/examples.mobile.json";
import maxMetadata from "libphonenumber-js/metadata.max.json";

/** mulberry32: small, fast, and the same sequence everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function corpus(size: number, seed = 15): string[] {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const digits = (n: number) => Array.from({ length: n }, () => int(10)).join("");
  const countries = getCountries();
  const callingCodes = [...new Set(countries.map((c) => getCountryCallingCode(c) as string)), ...Object.keys(maxMetadata.nonGeographic)];
  const seeds: string[] = countries.flatMap((c) => {
    const n = getExampleNumber(c as CountryCode, examples);
    return n ? [n.number as string] : [];
  });
  const out: string[] = [];
  const recent: string[] = [];
  while (out.length < size) {
    const mode = int(10);
    let s: string;
    if (mode <= 2) {
      // A neighbour of a known number: the last 1-6 digits replaced (a class-mate when few enough are free).
      const base = recent.length && rand() < 0.6 ? recent[int(recent.length)] : seeds[int(seeds.length)];
      const k = 1 + int(6);
      s = base.slice(0, Math.max(2, base.length - k)) + digits(Math.min(k, base.length - 2));
    } else if (mode <= 4) {
      // Random national digits under a real calling code, of a plausible length.
      s = `+${callingCodes[int(callingCodes.length)]}${digits(4 + int(11))}`;
    } else if (mode === 5) {
      // A known number one digit longer or shorter.
      const base = seeds[int(seeds.length)];
      s = rand() < 0.5 ? base + int(10) : base.slice(0, -1);
    } else if (mode === 6) {
      // Digits after a + that may start with no calling code at all.
      s = `+${digits(3 + int(14))}`;
    } else if (mode === 7) {
      // Written for people: spaces, dashes, dots, parentheses.
      const base = seeds[int(seeds.length)];
      const sep = [" ", "-", ".", ""][int(4)];
      const body = base.slice(1).replace(/(\d{3})(?=\d)/g, `$1${sep}`);
      s = rand() < 0.5 ? `+${body}` : `+(${body.slice(0, 2)}) ${body.slice(2)}`;
    } else {
      // A national form (no +), as files often hold them.
      const base = seeds[int(seeds.length)];
      const cc = callingCodes.find((c) => base.startsWith(`+${c}`)) ?? "";
      s = `${rand() < 0.5 ? "0" : ""}${base.slice(1 + cc.length)}`;
    }
    out.push(s);
    if (s.startsWith("+") && /^\+\d+$/.test(s)) {
      recent.push(s);
      if (recent.length > 500) recent.splice(0, 250);
    }
  }
  return out;
}
