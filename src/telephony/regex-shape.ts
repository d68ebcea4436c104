// What a numbering-plan pattern can look at, derived from its structure: how many trailing digits every match leaves
// free (`\d`), and how far into a string a prefix pattern can reach. Only the regex subset the numbering plans use is
// understood (groups, alternation, digit classes, counted quantifiers, a trailing `$`); anything else throws, and the
// caller then assumes the pattern may look at every digit.

type Item = { atom: Atom; min: number; max: number };
type Seq = Item[];
type Atom = { kind: "free" } | { kind: "digit" } | { kind: "end" } | { kind: "group"; alts: Seq[] };

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Seq[] {
    const alts = this.alts();
    if (this.i !== this.src.length) this.fail();
    return alts;
  }

  private fail(): never {
    throw new Error(`unsupported pattern at ${this.i}: ${this.src}`);
  }

  private alts(): Seq[] {
    const out: Seq[] = [this.seq()];
    while (this.src[this.i] === "|") {
      this.i++;
      out.push(this.seq());
    }
    return out;
  }

  private seq(): Seq {
    const items: Seq = [];
    while (this.i < this.src.length && this.src[this.i] !== "|" && this.src[this.i] !== ")") {
      const atom = this.atom();
      items.push({ atom, ...this.quantifier() });
    }
    return items;
  }

  private atom(): Atom {
    const c = this.src[this.i++];
    if (c >= "0" && c <= "9") return { kind: "digit" };
    if (c === "$") return { kind: "end" };
    if (c === "\\") {
      if (this.src[this.i++] !== "d") this.fail();
      return { kind: "free" };
    }
    if (c === "[") return this.charClass();
    if (c === "(") {
      if (this.src.startsWith("?:", this.i)) this.i += 2;
      else if (this.src[this.i] === "?") this.fail(); // lookarounds and the like
      const alts = this.alts();
      if (this.src[this.i++] !== ")") this.fail();
      return { kind: "group", alts };
    }
    this.i--;
    return this.fail();
  }

  /** A class of digits: free when it holds all ten. */
  private charClass(): Atom {
    const digits = new Set<number>();
    if (this.src[this.i] === "^") this.fail();
    while (this.src[this.i] !== "]") {
      const a = this.src[this.i++];
      if (!(a >= "0" && a <= "9")) this.fail();
      let b = a;
      if (this.src[this.i] === "-" && this.src[this.i + 1] !== "]") {
        b = this.src[this.i + 1];
        if (!(b >= "0" && b <= "9")) this.fail();
        this.i += 2;
      }
      for (let d = Number(a); d <= Number(b); d++) digits.add(d);
    }
    this.i++;
    return digits.size === 10 ? { kind: "free" } : { kind: "digit" };
  }

  private quantifier(): { min: number; max: number } {
    const c = this.src[this.i];
    let q = { min: 1, max: 1 };
    if (c === "?") q = { min: 0, max: 1 };
    else if (c === "*") q = { min: 0, max: Infinity };
    else if (c === "+") q = { min: 1, max: Infinity };
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) this.fail();
      const min = Number(m[1]);
      q = { min, max: m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]) };
      this.i += m[0].length - 1;
    } else return q;
    this.i++;
    if (this.src[this.i] === "?" || this.src[this.i] === "+") this.fail(); // lazy or possessive
    return q;
  }
}

const lengthOf = (alts: Seq[]): [number, number] => {
  let lo = Infinity;
  let hi = 0;
  for (const seq of alts) {
    let a = 0;
    let b = 0;
    for (const it of seq) {
      const [x, y] = it.atom.kind === "group" ? lengthOf(it.atom.alts) : it.atom.kind === "end" ? [0, 0] : [1, 1];
      a += x * it.min;
      b += y * it.max;
    }
    lo = Math.min(lo, a);
    hi = Math.max(hi, b);
  }
  return [lo, hi];
};

const hasEnd = (alts: Seq[]): boolean => alts.some((seq) => seq.some((it) => it.atom.kind === "end" || (it.atom.kind === "group" && hasEnd(it.atom.alts))));

/** Longest string the tables follow (longer ones get no free tail): E.164 national numbers are shorter. */
const MAX_LEN = 20;
/** By length: the fewest trailing characters matched by `\d` on any path of that length (Infinity: no such path). */
type Tails = number[];

const none = (): Tails => new Array<number>(MAX_LEN + 1).fill(Infinity);

/** Paths of `a` then `b`: the tail of `b`, continued into `a` when all of `b` is free. */
function concat(a: Tails, b: Tails): Tails {
  const out = none();
  for (let la = 0; la <= MAX_LEN; la++) {
    if (a[la] === Infinity) continue;
    for (let lb = 0; la + lb <= MAX_LEN; lb++) {
      const tb = b[lb];
      if (tb === Infinity) continue;
      out[la + lb] = Math.min(out[la + lb], tb < lb ? tb : lb + a[la]);
    }
  }
  return out;
}

function tailsOfAlts(alts: Seq[]): Tails {
  const out = none();
  for (const seq of alts) {
    let t = none();
    t[0] = 0;
    for (const it of seq) t = concat(t, repeat(atomTails(it.atom), it.min, it.max));
    for (let l = 0; l <= MAX_LEN; l++) out[l] = Math.min(out[l], t[l]);
  }
  return out;
}

function atomTails(atom: Atom): Tails {
  if (atom.kind === "group") return tailsOfAlts(atom.alts);
  if (atom.kind === "end") throw new Error("`$` inside a whole-number pattern");
  const t = none();
  t[1] = atom.kind === "free" ? 1 : 0;
  return t;
}

function repeat(x: Tails, min: number, max: number): Tails {
  const out = none();
  let acc = none();
  acc[0] = 0;
  // Past MAX_LEN + 1 repetitions every path is too long or adds nothing new.
  for (let k = 0; k <= Math.min(max, MAX_LEN + 1); k++) {
    if (k >= min) for (let l = 0; l <= MAX_LEN; l++) out[l] = Math.min(out[l], acc[l]);
    acc = concat(acc, x);
  }
  return out;
}

/**
 * For a pattern matched against a whole string, by the string's length (up to MAX_LEN): every string of that length
 * it accepts keeps being accepted (by the same path) when any of its last `freeTails[length]` characters changes to
 * another digit, so every string it refuses stays refused too. Infinity where it accepts no string of that length.
 */
export function freeTails(pattern: string): readonly number[] {
  return tailsOfAlts(new Parser(pattern).parse());
}

/**
 * For a pattern matched at the start of a string of `length` characters: how many leading characters can change
 * whether and how it matches (Infinity: possibly all). An alternative ending in `$` only matches a whole string of
 * its own length, so it counts only at such lengths.
 */
export function prefixReach(pattern: string, length: number): number {
  let reach = 0;
  for (const seq of new Parser(pattern).parse()) {
    const last = seq[seq.length - 1];
    const anchored = last?.atom.kind === "end";
    const body = anchored ? seq.slice(0, -1) : seq;
    if (hasEnd([body])) throw new Error("`$` other than at the end of an alternative");
    const [lo, hi] = lengthOf([body]);
    if (anchored) {
      if (length >= lo && length <= hi) return Infinity;
    } else reach = Math.max(reach, hi);
  }
  return reach;
}
