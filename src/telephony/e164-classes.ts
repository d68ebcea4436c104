// libphonenumber-js's answer for an E.164 string, remembered per class of numbers that must get the same answer.
// Parsing "+<digits>" reads, under its calling code: the main plan's national prefix for parsing (matched at the
// start of the national number; when it matches, the prefix may be stripped), every plan's leading digits (matched
// at the start of the possibly stripped number), every plan's national number and type patterns (matched against
// the whole number), and lengths. When the whole-number patterns leave the last `t` digits free (`\d` on every path
// of that length) and no prefix pattern reaches them, numbers of one length differing only there parse alike, so
// one parse answers for all. `t` comes from the metadata's own patterns (regex-shape.ts): no answer changes.
import { Metadata, type MetadataJson } from "libphonenumber-js/core";
import maxMetadata from "libphonenumber-js/metadata.max.json";
import { freeTails, prefixReach } from "./regex-shape";
import { log } from "../lib/log";

const TYPES = ["FIXED_LINE", "MOBILE", "TOLL_FREE", "PREMIUM_RATE", "PERSONAL_NUMBER", "VOICEMAIL", "UAN", "PAGER", "VOIP", "SHARED_COST"];

type PlanView = {
  nationalNumberPattern(): string;
  leadingDigits(): string | undefined;
  nationalPrefixForParsing(): string | undefined;
  type(t: string): { pattern(): string } | undefined;
};
type MetadataView = {
  getCountryCodesForCallingCode(cc: string): string[] | undefined;
  hasCallingCode(cc: string): boolean;
  selectNumberingPlan(arg: string): MetadataView;
  numberingPlan: PlanView;
};

// The metadata `libphonenumber-js/max` parses with (the same module, not a second copy).
let metadata: MetadataView | null = null;
const meta = () => (metadata ??= new (Metadata as unknown as new (m: MetadataJson) => MetadataView)(maxMetadata as MetadataJson));

/** What the parse of one calling code reads. */
type Plan = {
  /** By national number length: digits at the end that no whole-number pattern constrains. */
  tails: number[];
  /** The main plan's national prefix for parsing, matched where the national number starts (null: none). */
  prefix: RegExp | null;
  prefixSource: string | null;
  /** The prefix captures (a transform rule may rewrite the number instead of stripping it). */
  prefixCaptures: boolean;
  leadingDigits: string[];
  /** reachOf's answers by length (memo). */
  reach: (Reach | null | undefined)[];
};

const plans = new Map<string, Plan | null>();

function planOf(cc: string): Plan | null {
  if (plans.has(cc)) return plans.get(cc)!;
  let plan: Plan | null = null;
  try {
    const m = meta();
    let tails: number[] = [];
    const add = (pattern: string | undefined) => {
      if (!pattern) return;
      const t = freeTails(pattern);
      tails = t.map((v, n) => Math.min(v, tails[n] ?? Infinity));
    };
    const leadingDigits: string[] = [];
    // The plans a number of this code may be judged by (the non-geographic codes have one, named by the code).
    for (const region of m.getCountryCodesForCallingCode(cc) ?? [cc]) {
      const p = m.selectNumberingPlan(region).numberingPlan;
      add(p.nationalNumberPattern());
      for (const t of TYPES) add(p.type(t)?.pattern());
      const ld = p.leadingDigits();
      if (ld) leadingDigits.push(ld);
    }
    // The parse strips a national prefix by the plan the calling code selects (its main region).
    const prefixSource = m.selectNumberingPlan(cc).numberingPlan.nationalPrefixForParsing() ?? null;
    plan = {
      tails,
      prefix: prefixSource ? new RegExp(`(?:${prefixSource})`, "y") : null,
      prefixSource,
      prefixCaptures: prefixSource !== null && /\((?!\?)/.test(prefixSource),
      leadingDigits,
      reach: [],
    };
  } catch (err) {
    log("warning", "e164_class_plan_failed", { calling_code: cc, error: String(err) });
  }
  plans.set(cc, plan);
  return plan;
}

type Reach = { prefix: number; leading: number };

/** How far the prefix patterns can read into a national number of `length` digits (null: anywhere). */
function reachOf(plan: Plan, length: number): Reach | null {
  const known = plan.reach[length];
  if (known !== undefined) return known;
  let r: Reach | null;
  try {
    const prefix = plan.prefixSource ? prefixReach(plan.prefixSource, length) : 0;
    const leading = Math.max(0, ...plan.leadingDigits.map((p) => prefixReach(p, length)));
    r = Number.isFinite(prefix) && Number.isFinite(leading) ? { prefix, leading } : null;
  } catch {
    r = null;
  }
  plan.reach[length] = r;
  return r;
}

/** The calling code at the start of "+<digits>" (1 to 3 digits, as the parse finds it), or null. */
export function callingCodeOf(e164: string): string | null {
  if (e164.charCodeAt(1) === 48 /* 0 */) return null;
  // Read as a number digit by digit (no string per try); the metadata's answer is remembered per code.
  let n = 0;
  for (let i = 1; i <= 3 && i < e164.length; i++) {
    const d = e164.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
    let cc = callingCodes.get(n);
    if (cc === undefined) {
      const text = e164.slice(1, i + 1);
      cc = meta().hasCallingCode(text) ? text : null;
      callingCodes.set(n, cc);
    }
    if (cc !== null) return cc;
  }
  return null;
}
/** Numbers of 1 to 3 digits (none starts with 0) and the calling code they are, or null. */
const callingCodes = new Map<number, string | null>();

/**
 * How many trailing digits of `e164` ("+<digits>") change nothing in its parse: 0 when every digit may matter.
 * Numbers of one length that agree on all but those digits get the same answer.
 */
export function freeDigits(e164: string): number {
  const cc = callingCodeOf(e164);
  if (cc === null) return 0;
  const plan = planOf(cc);
  const start = 1 + cc.length;
  const n = e164.length - start;
  const reach = plan && reachOf(plan, n);
  if (!plan || !reach) return 0;
  let free = Math.min(plan.tails[n] ?? 0, n - Math.max(reach.prefix, reach.leading));
  if (plan.prefix) {
    // A matching national prefix may be stripped: leading digits are then read after it, and the patterns judge the
    // shorter number too. Whether it matches depends on digits within its reach, which the class shares.
    plan.prefix.lastIndex = start;
    const m = plan.prefix.exec(e164);
    if (m) {
      if (plan.prefixCaptures) return 0;
      free = Math.min(free, plan.tails[n - m[0].length] ?? 0, n - m[0].length - reach.leading);
    }
  }
  return Math.max(0, Math.min(free, n));
}

/** Classes remembered at most (then the cache starts over): memory stays bounded whatever the input. */
export const MAX_CLASSES = 20_000;

/**
 * `analyze(raw)` through the class cache: for a plain "+<digits>" string, the answer found for the first number of
 * its class, made this number's by `rebase`; anything else goes straight to `analyze`.
 */
export class ClassCache<T> {
  // By length, then by the digits that may matter: the class without building a key string for it.
  private readonly byLength: (Map<string, T | null> | undefined)[] = [];
  private size = 0;

  constructor(
    private readonly analyze: (raw: string) => T | null,
    private readonly rebase: (answer: T, raw: string) => T,
  ) {}

  get(raw: string): T | null {
    const free = plainFreeDigits(raw);
    if (free === 0) return this.analyze(raw);
    const len = raw.length;
    const prefix = raw.slice(0, len - free);
    let classes = this.byLength[len];
    const known = classes?.get(prefix);
    if (known !== undefined) return known === null ? null : this.rebase(known, raw);
    const answer = this.analyze(raw);
    if (this.size >= MAX_CLASSES) {
      this.byLength.length = 0;
      this.size = 0;
      classes = undefined;
    }
    if (!classes) this.byLength[len] = classes = new Map();
    classes.set(prefix, answer);
    this.size++;
    return answer;
  }
}

/** freeDigits of a plain "+<digits>" string (2 to 17 national digits after a calling code of 1 to 3); 0 for anything else. */
function plainFreeDigits(raw: string): number {
  const len = raw.length;
  if (len < 4 || len > 21 || raw.charCodeAt(0) !== 43 /* + */) return 0;
  for (let i = 1; i < len; i++) {
    const c = raw.charCodeAt(i);
    if (c < 48 || c > 57) return 0;
  }
  return freeDigits(raw);
}

/** The class of a plain "+<digits>" string (its length and the digits that may matter), or null. */
export function classKey(raw: string): string | null {
  const free = plainFreeDigits(raw);
  return free === 0 ? null : `${raw.length}:${raw.slice(0, raw.length - free)}`;
}
