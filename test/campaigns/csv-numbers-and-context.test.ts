// A campaign's CSV: national numbers read with the campaign's `default_country` (or their E.164 form suggested
// from the caller ID's country), and each contact's initial_context held to the single call's caps.
import { describe, expect, it } from "vitest";
import { importCsv, type ImportOptions } from "../../src/campaigns/csv/import";
import type { ContactInput } from "../../src/campaigns/engine/object-api";
import { MAX_CONTEXT_BYTES, MAX_CONTEXT_KEYS } from "../../src/lib/context-limits";
import { createCampaign, upload, world } from "./support";

async function importText(csv: string, opts: Partial<Omit<ImportOptions, "sink">> = {}) {
  const contacts: ContactInput[] = [];
  const sink = { importContacts: async (chunk: ContactInput[]) => (contacts.push(...chunk), { inserted: chunk.length, duplicates: [] }) };
  const body = new Blob([csv]).stream();
  const outcome = await importCsv(body, { pbx: false, requiredVariables: [], ...opts, sink });
  return { outcome, contacts };
}

describe("CSV national numbers", () => {
  it("default_country: national numbers are stored in E.164; an explicit country code is never second-guessed", async () => {
    const csv = ["phone_number,first_name", "(415) 555-0102,Ada", "415.555.0103,Bob", "+442071838750,Cy"].join("\n");
    const { outcome, contacts } = await importText(csv, { numbers: { defaultCountry: "US" } });
    expect(outcome.ok).toBe(true);
    expect(contacts.map((c) => c.phone_number)).toEqual(["+14155550102", "+14155550103", "+442071838750"]);
  });

  it("default_country: a number not valid there says so, located", async () => {
    const { outcome } = await importText("phone_number\n12\n", { numbers: { defaultCountry: "us" } });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.items[0]).toMatchObject({ loc: ["body", "source_url", 2, "phone_number"], type: "phone_number_invalid", input: "12" });
    expect(outcome.items[0].msg).toMatch(/E\.164.*not a valid US number/);
  });

  it("without default_country: the row error says E.164 and suggests the form in the caller ID's country", async () => {
    const { outcome } = await importText("phone_number\n(415) 555-0102\n999\n", { numbers: { suggestCountry: "US" } });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.items[0]).toMatchObject({ loc: ["body", "source_url", 2, "phone_number"], ctx: { suggestion: "+14155550102", country: "US" } });
    expect(outcome.items[0].msg).toBe('Phone number must be in E.164 format (+ and country code): did you mean +14155550102? (or send default_country "US")');
    // Nothing to suggest: the plain rule.
    expect(outcome.items[1]).toMatchObject({
      loc: ["body", "source_url", 3, "phone_number"],
      msg: "Phone number must be in E.164 format (+ and country code)",
    });
  });

  it("a PBX file keeps short numbers as extensions, default_country or not", async () => {
    const { contacts } = await importText("phone_number\n1001\n", { pbx: true, numbers: { defaultCountry: "US" } });
    expect(contacts.map((c) => c.phone_number)).toEqual(["1001"]);
  });

  it("POST /campaign/create takes default_country; an unknown one is a 422 at its loc", async () => {
    const w = await world();
    const key = await upload(w, "phone_number,first_name\n(415) 555-0102,Ada\n");
    const bad = await createCampaign(w, { source_url: key, default_country: "XX" });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "default_country"]);

    const plain = await createCampaign(w, { source_url: key });
    expect(plain.status).toBe(422);
    expect(plain.json.detail[0]).toMatchObject({ loc: ["body", "source_url", 2, "phone_number"], input: "(415) 555-0102" });

    const made = await createCampaign(w, { source_url: key, default_country: "US" });
    expect(made.status, made.text).toBe(200);
    expect(made.json.total_rows).toBe(1);
  });
});

describe("CSV contact context caps", () => {
  it(`more than ${MAX_CONTEXT_KEYS} context columns is one header error`, async () => {
    const names = Array.from({ length: MAX_CONTEXT_KEYS + 1 }, (_, i) => `c${i}`);
    const { outcome } = await importText(`phone_number,${names.join(",")}\n+14155550100,${names.map(() => "x").join(",")}\n`);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.items).toHaveLength(1);
    expect(outcome.items[0]).toMatchObject({ loc: ["body", "source_url", 1], type: "csv_too_many_columns", ctx: { max_columns: MAX_CONTEXT_KEYS } });
    // Exactly the cap (plus the greeting columns, which are not context) is fine.
    const ok = await importText(
      `phone_number,greeting_override_type,${names.slice(1).join(",")}\n+14155550100,,${names
        .slice(1)
        .map(() => "x")
        .join(",")}\n`,
    );
    expect(ok.outcome.ok).toBe(true);
  });

  it(`a row whose context is over ${MAX_CONTEXT_BYTES} bytes as JSON is a located row error; at the cap it is kept`, async () => {
    // {"note":"…"} is 11 bytes of JSON around the value.
    const fits = "a".repeat(MAX_CONTEXT_BYTES - 11);
    const over = "a".repeat(MAX_CONTEXT_BYTES - 10);
    // Bytes, not characters: 3,000 quotes are 6,000 bytes of JSON and 6,000 é are 12,000 (9,000 characters in all).
    const escaped = '"'.repeat(3_000) + "é".repeat(6_000);
    const csv = ["phone_number,note", `+14155550100,${fits}`, `+14155550101,${over}`, `+14155550102,"${escaped.replace(/"/g, '""')}"`].join("\n");
    const { outcome } = await importText(csv);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.items.map((i) => [i.loc, i.type])).toEqual([
      [["body", "source_url", 3], "csv_context_too_large"],
      [["body", "source_url", 4], "csv_context_too_large"],
    ]);
    expect(outcome.items[0].msg).toContain(`${MAX_CONTEXT_BYTES} bytes`);
  });
});
