// The CSV rules on the streaming importer, against an in-memory sink that judges duplicates like
// the campaign object does. Files are fed in several chunkings to prove chunk boundaries change nothing.
import { describe, expect, it } from "vitest";
import { completePrefixLength, firstInvalidUtf8, Utf8Chunks } from "../../src/campaigns/csv/utf8";
import { detectNewline } from "../../src/campaigns/csv/records";
import { importCsv, type ImportOptions } from "../../src/campaigns/csv/import";
import type { ContactInput } from "../../src/campaigns/engine/object-api";
import { inPieces } from "../streams";

const enc = new TextEncoder();

class MemorySink {
  readonly contacts: ContactInput[] = [];
  private readonly first = new Map<string, number>();
  calls = 0;
  async importContacts(chunk: ContactInput[]) {
    this.calls++;
    const duplicates: { row: number; phone_number: string; first_row: number }[] = [];
    let inserted = 0;
    for (const c of chunk) {
      const f = this.first.get(c.phone_number);
      if (f !== undefined) duplicates.push({ row: c.row, phone_number: c.phone_number, first_row: f });
      else {
        this.first.set(c.phone_number, c.row);
        this.contacts.push(c);
        inserted++;
      }
    }
    return { inserted, duplicates };
  }
}

type Opts = Partial<Omit<ImportOptions, "sink">>;

async function run(input: string | Uint8Array, opts: Opts = {}, chunk = 1 << 16) {
  const bytes = typeof input === "string" ? enc.encode(input) : input;
  const sink = new MemorySink();
  const outcome = await importCsv(inPieces(bytes, chunk), { pbx: false, requiredVariables: [], chunkRows: 3, ...opts, sink });
  return { outcome, sink };
}

/** The same file through several chunkings (1 byte, 7 bytes, whole): all must agree. */
async function runAll(input: string | Uint8Array, opts: Opts = {}) {
  const results = [];
  for (const chunk of [1, 7, 1 << 20]) results.push(await run(input, opts, chunk));
  for (const r of results.slice(1)) {
    expect(r.outcome).toEqual(results[0].outcome);
    expect(r.sink.contacts).toEqual(results[0].sink.contacts);
  }
  return results[0];
}

async function items(input: string | Uint8Array, opts: Opts = {}) {
  const { outcome } = await runAll(input, opts);
  if (outcome.ok) throw new Error("expected problems, got success");
  return outcome.items;
}

describe("UTF-8 decoding", () => {
  it("finds the first invalid byte", () => {
    expect(firstInvalidUtf8(enc.encode("héllo €𝄞"))).toBe(-1);
    expect(firstInvalidUtf8(new Uint8Array([0x41, 0xff, 0x41]))).toBe(1);
    expect(firstInvalidUtf8(new Uint8Array([0x41, 0xc0, 0x80]))).toBe(1); // overlong NUL
    expect(firstInvalidUtf8(new Uint8Array([0xed, 0xa0, 0x80]))).toBe(0); // UTF-16 surrogate
    expect(firstInvalidUtf8(new Uint8Array([0x41, 0x42, 0xe2, 0x82]))).toBe(2); // cut short
    expect(firstInvalidUtf8(new Uint8Array([0x80]))).toBe(0);
    expect(firstInvalidUtf8(new Uint8Array([0xf4, 0x90, 0x80, 0x80]))).toBe(0); // above U+10FFFF
  });

  it("holds back a sequence split across chunks", () => {
    const euro = enc.encode("a€"); // 61 e2 82 ac
    expect(completePrefixLength(euro)).toBe(4);
    expect(completePrefixLength(euro.slice(0, 3))).toBe(1);
    expect(completePrefixLength(euro.slice(0, 2))).toBe(1);
    const d = new Utf8Chunks();
    const parts = [euro.slice(0, 1), euro.slice(1, 2), euro.slice(2, 3), euro.slice(3)];
    let text = "";
    for (const p of parts) text += d.push(p).text;
    text += d.push(new Uint8Array(0), true).text;
    expect(text).toBe("a€");
  });

  it("drops a leading BOM only", () => {
    const d = new Utf8Chunks();
    expect(d.push(enc.encode("\uFEFFa\uFEFFb"), true)).toEqual({ text: "a\uFEFFb" });
  });

  it("reports the stream offset of an invalid byte and the text before it", () => {
    const d = new Utf8Chunks();
    expect(d.push(enc.encode("abcd"))).toEqual({ text: "abcd" });
    expect(d.push(new Uint8Array([0x65, 0xfe, 0x66]))).toEqual({ text: "e", invalidAt: 5 });
  });

  it("refuses a file that ends inside a sequence", () => {
    const d = new Utf8Chunks();
    d.push(new Uint8Array([0x61, 0x62, 0x63, 0xe2]));
    expect(d.push(new Uint8Array(0), true)).toEqual({ text: "", invalidAt: 3 });
  });
});

describe("line endings", () => {
  it("are detected outside quotes", () => {
    const cases: Array<[string, string]> = [
      ["a,b\nc", "\n"],
      ["a,b\r\nc", "\r\n"],
      ["a,b\rc", "\r"],
      ['"a\nb",c\r\nd', "\r\n"],
    ];
    for (const [text, newline] of cases) expect(detectNewline(text)).toBe(newline);
    expect(detectNewline('a"b,c\nd')).toBe("\n"); // a quote inside a field is data
    expect(detectNewline("a,b\r")).toBeNull(); // LF may follow
    expect(detectNewline("abc")).toBeNull();
  });
});

describe("CSV import: good files", () => {
  it("turns rows into contacts with row numbers, normalized numbers, context and greeting overrides", async () => {
    const csv = [
      "phone_number,first_name,greeting_override_type,greeting_override_text,greeting_override_recording_id",
      "+14155550100,Ada,,,",
      " +14155550101 ,Bob,text,Hello {{first_name}}!,",
      "+442071838750,Cy,audio,,rec_123",
      "+4915123456789,Dee,TEXT,Hi,",
    ].join("\n");
    const { outcome, sink } = await runAll(csv);
    expect(outcome).toEqual({
      ok: true,
      rows: 4,
      inserted: 4,
      columns: ["phone_number", "first_name", "greeting_override_type", "greeting_override_text", "greeting_override_recording_id"],
    });
    expect(sink.contacts).toEqual([
      { row: 2, phone_number: "+14155550100", initial_context: { first_name: "Ada" }, greeting_override: null },
      { row: 3, phone_number: "+14155550101", initial_context: { first_name: "Bob" }, greeting_override: { type: "text", text: "Hello {{first_name}}!" } },
      { row: 4, phone_number: "+442071838750", initial_context: { first_name: "Cy" }, greeting_override: { type: "audio", recordingId: "rec_123" } },
      { row: 5, phone_number: "+4915123456789", initial_context: { first_name: "Dee" }, greeting_override: { type: "text", text: "Hi" } },
    ]);
  });

  it("drops a BOM, takes CRLF, trims and case-folds header names, and skips blank lines (keeping row numbers)", async () => {
    const csv = "\uFEFF Phone_Number , Name \r\n+14155550100,Ada\r\n\r\n,\r\n+14155550101,Bob\r\n";
    const { outcome, sink } = await runAll(csv);
    expect(outcome.ok).toBe(true);
    expect(sink.contacts.map((c) => [c.row, c.phone_number, c.initial_context])).toEqual([
      [2, "+14155550100", { Name: "Ada" }],
      [5, "+14155550101", { Name: "Bob" }],
    ]);
  });

  it("reads quoted commas, quotes and newlines; a multi-line cell is one spreadsheet row", async () => {
    const csv = 'phone_number,note,city\n+14155550100,"Line one\nline two, with comma",Paris\n+14155550101,"She said ""hi""",Rome\n';
    const { outcome, sink } = await runAll(csv);
    expect(outcome.ok).toBe(true);
    expect(sink.contacts.map((c) => [c.row, c.initial_context])).toEqual([
      [2, { note: "Line one\nline two, with comma", city: "Paris" }],
      [3, { note: 'She said "hi"', city: "Rome" }],
    ]);
  });

  it("stores a formula-like cell as text, never evaluated", async () => {
    const csv = 'phone_number,website\n+14155550100,"=HYPERLINK(""http://evil.example"",""click"")"\n+14155550101,=1+1\n';
    const { sink } = await runAll(csv);
    expect(sink.contacts.map((c) => c.initial_context.website)).toEqual(['=HYPERLINK("http://evil.example","click")', "=1+1"]);
  });

  it("accepts a file without a final newline, and stray empty trailing cells", async () => {
    const { outcome, sink } = await runAll("phone_number,name\n+14155550100,Ada,,\n+14155550101,Bob");
    expect(outcome.ok).toBe(true);
    expect(sink.contacts).toHaveLength(2);
  });

  it("takes extensions, SIP URIs and dial strings for an ari configuration only", async () => {
    const csv = "phone_number\n1001\nsip:alice@pbx.example.com\nPJSIP/2002@trunk\n+14155550100\n";
    const ari = await runAll(csv, { pbx: true });
    expect(ari.outcome.ok).toBe(true);
    expect(ari.sink.contacts.map((c) => c.phone_number)).toEqual(["1001", "sip:alice@pbx.example.com", "PJSIP/2002@trunk", "+14155550100"]);
    const carrier = await items(csv, { pbx: false });
    expect(carrier.map((i) => i.loc)).toEqual([
      ["body", "source_url", 2, "phone_number"],
      ["body", "source_url", 3, "phone_number"],
      ["body", "source_url", 4, "phone_number"],
    ]);
  });

  it("hands contacts to the sink in chunks", async () => {
    const rows = Array.from({ length: 10 }, (_, i) => `+1415555${String(100 + i).padStart(4, "0")}`);
    const { outcome, sink } = await run(["phone_number", ...rows].join("\n"), { chunkRows: 4 });
    expect(outcome.ok).toBe(true);
    expect(sink.calls).toBe(3); // 4 + 4 + 2
    // A chunk also ends when its cells reach the character bound: 12 characters a row, 30 at most.
    const byChars = await run(["phone_number", ...rows].join("\n"), { chunkRows: 100, chunkChars: 30 });
    expect(byChars.sink.calls).toBe(4); // 3 + 3 + 3 + 1
    expect(byChars.sink.contacts).toHaveLength(10);
  });

  it("passes when every template variable the agent uses is a column (case-insensitively)", async () => {
    const { outcome } = await runAll("phone_number,First_Name\n+14155550100,Ada\n", { requiredVariables: ["first_name", "phone_number"] });
    expect(outcome.ok).toBe(true);
  });
});

describe("CSV import: bad files (one located item per problem)", () => {
  it("an empty file", async () => {
    for (const csv of ["", "\uFEFF", "\n\n  \n"]) {
      const [item] = await items(csv);
      expect(item).toMatchObject({ loc: ["body", "source_url", 1], type: "csv_empty", ctx: { total_errors: 1 } });
    }
  });

  it("a header without rows", async () => {
    const [item] = await items("phone_number,name\n");
    expect(item).toMatchObject({ loc: ["body", "source_url", 2], type: "csv_no_rows" });
  });

  it("no header (the first row is data)", async () => {
    const list = await items("+14155550100,Ada\n+14155550101,Bob\n");
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ loc: ["body", "source_url", 1, "phone_number"], type: "missing" });
    expect(list[0].msg).toMatch(/looks like data/);
  });

  it("no phone_number column", async () => {
    const [item] = await items("phone,name\n+14155550100,Ada\n");
    expect(item).toMatchObject({
      loc: ["body", "source_url", 1, "phone_number"],
      type: "missing",
      msg: "Column phone_number is required in the header row",
      ctx: { columns: ["phone", "name"], total_errors: 1 },
    });
  });

  it("duplicate or empty header names", async () => {
    const list = await items("phone_number,Name,name,\n+14155550100,a,b,c\n");
    expect(list.map((i) => [i.loc, i.type])).toEqual([
      [["body", "source_url", 1, "name"], "csv_header_duplicate"],
      [["body", "source_url", 1, 4], "csv_header_empty"],
    ]);
  });

  it("numbers with spaces, ampersands, commas, letters or no country code", async () => {
    const csv = 'phone_number,name\n+1 555 0100,a\na&b,b\n"+1415,5550100",c\n4155550100,d\n+1555,e\n=HYPERLINK("x"),f\n,g\n';
    const list = await items(csv);
    expect(list.map((i) => [i.loc[2], i.loc[3], i.type, i.input])).toEqual([
      [2, "phone_number", "phone_number_invalid", "+1 555 0100"],
      [3, "phone_number", "phone_number_invalid", "a&b"],
      [4, "phone_number", "phone_number_invalid", "+1415,5550100"],
      [5, "phone_number", "phone_number_invalid", "4155550100"],
      [6, "phone_number", "phone_number_invalid", "+1555"],
      [7, "phone_number", "phone_number_invalid", '=HYPERLINK("x")'],
      [8, "phone_number", "phone_number_invalid", ""],
    ]);
    expect(list[0].msg).toMatch(/spaces/);
    expect(list[1].msg).toMatch(/ampersand/);
    expect(list[0].ctx).toEqual({ total_errors: 7 });
  });

  it("duplicates after normalization, naming the first row", async () => {
    const list = await items("phone_number\n+14155550100\n+14155550101\n +14155550100\n+14155550101\n");
    expect(list).toEqual([
      {
        loc: ["body", "source_url", 4, "phone_number"],
        msg: "Duplicate phone number: +14155550100 is already in row 2",
        type: "phone_number_duplicate",
        input: "+14155550100",
        ctx: { first_row: 2, total_errors: 2 },
      },
      {
        loc: ["body", "source_url", 5, "phone_number"],
        msg: "Duplicate phone number: +14155550101 is already in row 3",
        type: "phone_number_duplicate",
        input: "+14155550101",
        ctx: { first_row: 3 },
      },
    ]);
  });

  it("greeting overrides that are incomplete or unknown, or use a variable that is not a column", async () => {
    const csv = [
      "phone_number,name,greeting_override_type,greeting_override_text,greeting_override_recording_id",
      "+14155550100,a,text,,",
      "+14155550101,b,audio,,",
      "+14155550102,c,video,,",
      "+14155550103,d,text,Hi {{ name }} from {{company}},",
    ].join("\n");
    const list = await items(csv);
    expect(list.map((i) => [i.loc[2], i.loc[3], i.type])).toEqual([
      [2, "greeting_override_text", "missing"],
      [3, "greeting_override_recording_id", "missing"],
      [4, "greeting_override_type", "enum"],
      [5, "greeting_override_text", "unknown_template_variable"],
    ]);
    expect(list[3].ctx).toEqual({ variables: ["company"] });
  });

  it("an agent's template variable that is not a column (after the rows are found good)", async () => {
    const list = await items("phone_number,name\n+14155550100,Ada\n", { requiredVariables: ["name", "account_id"] });
    expect(list).toEqual([
      {
        loc: ["body", "source_url", 1, "account_id"],
        msg: 'The agent uses the template variable {{account_id}}, but the file has no column "account_id"',
        type: "missing_template_variable",
        ctx: { columns: ["phone_number", "name"], total_errors: 1 },
      },
    ]);
    // Row problems come first: the variable is not reported alongside them.
    const rows = await items("phone_number,name\nnope,Ada\n", { requiredVariables: ["account_id"] });
    expect(rows.map((i) => i.type)).toEqual(["phone_number_invalid"]);
  });

  it("invalid UTF-8, located at its row and column", async () => {
    const bytes = new Uint8Array([...enc.encode("phone_number,name\n+14155550100,Ada\n+14155550101,B"), 0xff, ...enc.encode("b\n")]);
    const list = await items(bytes);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ loc: ["body", "source_url", 3, "name"], type: "csv_encoding", ctx: { byte_offset: 49, total_errors: 1 } });
  });

  it("Latin-1 text (not UTF-8) in the header", async () => {
    const bytes = new Uint8Array([...enc.encode("phone_number,pr"), 0xe9, ...enc.encode("nom\n+14155550100,x\n")]);
    const [item] = await items(bytes);
    expect(item).toMatchObject({ loc: ["body", "source_url", 1, 2], type: "csv_encoding" });
  });

  it("a value without a column, an unclosed quote, malformed quotes", async () => {
    expect((await items("phone_number,name\n+14155550100,Ada,extra\n"))[0]).toMatchObject({
      loc: ["body", "source_url", 2, 3],
      type: "csv_too_many_values",
      input: "extra",
    });
    expect((await items('phone_number,name\n+14155550100,"Ada\n+14155550101,Bob\n'))[0]).toMatchObject({
      loc: ["body", "source_url", 2],
      type: "csv_unclosed_quote",
    });
    expect((await items('phone_number,name\n+14155550100,"Ada"x,y\n+14155550101,Bob\n'))[0]).toMatchObject({
      loc: ["body", "source_url", 2],
      type: "csv_invalid_quotes",
    });
  });

  it("more rows than allowed", async () => {
    const list = await items("phone_number\n+14155550100\n+14155550101\n+14155550102\n", { maxRows: 2 });
    expect(list).toEqual([
      { loc: ["body", "source_url", 4], msg: "The file has more than 2 contacts", type: "csv_too_many_rows", ctx: { max_rows: 2, total_errors: 1 } },
    ]);
  });

  it("reports at most 100 items, in row order, with the total in the first item's ctx", async () => {
    const rows: string[] = [];
    for (let i = 0; i < 150; i++) rows.push(i % 2 ? "bad" : "+14155550100"); // 75 duplicates and 75 bad numbers
    const { outcome } = await run(["phone_number", ...rows].join("\n"), { chunkRows: 10 });
    if (outcome.ok) throw new Error("expected problems");
    expect(outcome.total).toBe(149);
    expect(outcome.items).toHaveLength(100);
    expect(outcome.items[0].ctx).toEqual({ total_errors: 149 });
    const rowNumbers = outcome.items.map((i) => i.loc[2] as number);
    expect(rowNumbers).toEqual([...rowNumbers].sort((a, b) => a - b));
    expect(rowNumbers[0]).toBe(3);
    expect(rowNumbers[99]).toBe(102);
  });
});

describe("CSV import: a partial import (skipInvalid)", () => {
  it("keeps the good rows and returns each refused row's own cells with its row and reasons, across chunks (3 rows each)", async () => {
    const rows = Array.from({ length: 10 }, (_, i) => `+1415555${String(1000 + i)},N${i}`);
    rows[1] = "bad-1,N1"; // its own rule
    rows[4] = `${rows[0].split(",")[0]},Dup`; // a duplicate, judged by the sink in a later chunk
    rows[8] = "+14155551008,"; // a required variable left blank
    const { outcome, sink } = await runAll(`phone_number,first_name\n${rows.join("\n")}\n`, { skipInvalid: true, requiredVariables: ["first_name"] });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(sink.contacts.map((c) => c.row)).toEqual([2, 4, 5, 7, 8, 9, 11]);
    expect(outcome.refused).toMatchObject({ rows: 3, truncated: false });
    const lines = outcome.refused!.csv.split("\r\n");
    expect(lines[0]).toBe("phone_number,first_name,row,reason");
    expect(lines.slice(1).map((l) => l.split(",").slice(0, 3))).toEqual([
      ["bad-1", "N1", "3"],
      ["+14155551000", "Dup", "6"],
      ["+14155551008", "", "10"],
    ]);
  });

  it("still fails a file with a problem of its own, and one with no good row", async () => {
    const noGood = await runAll("phone_number\nbad\n", { skipInvalid: true });
    expect(noGood.outcome.ok).toBe(false);
    const noColumn = await runAll("phone_number\n+14155550100\nbad\n", { skipInvalid: true, requiredVariables: ["first_name"] });
    expect(noColumn.outcome).toMatchObject({ ok: false, items: [expect.objectContaining({ type: "missing_template_variable" })] });
  });
});
