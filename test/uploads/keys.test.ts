import { describe, expect, it } from "vitest";
import { isWellFormedKey, keyBelongsTo, newFileKey, safeFileName } from "../../src/uploads/keys";
import { checkGrant, grantText, mediaType, signGrant } from "../../src/uploads/local";

describe("upload keys", () => {
  it("reduce file names to safe characters and keep the extension", () => {
    const cases: Array<[string, string]> = [
      ["contacts.csv", "contacts.csv"],
      ["My Contacts (v2).csv", "My_Contacts_v2_.csv"],
      ["Liste-été.csv", "Liste-ete.csv"],
      ["../../etc/passwd", "passwd"],
      ["C:\\Users\\x\\list.csv", "list.csv"],
      [".hidden", "hidden"],
      ["???", "upload.csv"],
    ];
    for (const [name, safe] of cases) expect(safeFileName(name)).toBe(safe);
    const long = safeFileName("a".repeat(300) + ".csv");
    expect(long.length).toBe(100);
    expect(long.endsWith(".csv")).toBe(true);
  });

  it("are issued under the organization and recognized only there", () => {
    const key = newFileKey(42, "list.csv", "123e4567-e89b-42d3-a456-426614174000");
    expect(key).toBe("campaigns/42/123e4567-e89b-42d3-a456-426614174000/list.csv");
    expect(isWellFormedKey(key)).toBe(true);
    expect(keyBelongsTo(42, key)).toBe(true);
    expect(keyBelongsTo(4, key)).toBe(false);
    expect(keyBelongsTo(420, key)).toBe(false);
    for (const bad of [
      "campaigns/42/not-a-uuid/list.csv",
      "campaigns/42/123e4567-e89b-42d3-a456-426614174000/../x.csv",
      "campaigns/42/123e4567-e89b-42d3-a456-426614174000/a/b.csv",
      "other/42/123e4567-e89b-42d3-a456-426614174000/list.csv",
      "campaigns/42/123e4567-e89b-42d3-a456-426614174000/",
    ]) {
      expect(isWellFormedKey(bad), bad).toBe(false);
      expect(keyBelongsTo(42, bad), bad).toBe(false);
    }
  });
});

describe("Worker-served upload grants", () => {
  const grant = { key: "campaigns/1/123e4567-e89b-42d3-a456-426614174000/a.csv", size: 10, type: "text/csv", expires: 2_000_000_000 };
  const params = async (over: Record<string, string> = {}) =>
    new URLSearchParams({ size: "10", type: "text/csv", expires: "2000000000", sig: await signGrant("s", grant), ...over });

  it("sign every field, one per line", () => {
    expect(grantText(grant)).toBe("edgedial-upload-v1\ncampaigns/1/123e4567-e89b-42d3-a456-426614174000/a.csv\n10\ntext/csv\n2000000000");
  });

  it("check signature before expiry", async () => {
    expect(await checkGrant("s", grant.key, await params(), 1_999_999_999_000)).toEqual({ ok: true, grant });
    expect(await checkGrant("s", grant.key, await params(), 2_000_000_000_000)).toMatchObject({ ok: false, status: 403, detail: "Upload URL has expired" });
    expect(await checkGrant("other", grant.key, await params(), 0)).toMatchObject({ detail: "Invalid upload signature" });
    expect(await checkGrant("", grant.key, await params(), 0)).toMatchObject({ detail: "Invalid upload signature" });
    expect(await checkGrant("s", grant.key, await params({ size: "1e3" }), 0)).toMatchObject({ detail: "Invalid upload signature" });
    // A tampered expiry in the past is still reported as invalid, not as expired.
    expect(await checkGrant("s", grant.key, await params({ expires: "1" }), 5_000)).toMatchObject({ detail: "Invalid upload signature" });
  });

  it("compare media types without parameters or case", () => {
    expect(mediaType("Text/CSV; charset=utf-8")).toBe("text/csv");
    expect(mediaType(undefined)).toBe("");
  });
});
