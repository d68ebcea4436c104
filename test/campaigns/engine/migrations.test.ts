// The campaign object's migrations are shipped: a stored object at version v has run exactly statements 1..v. Moving a
// statement between modules is fine, changing one (even its whitespace: sqlite_master keeps the text) is not.
import { describe, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION } from "../../../src/campaigns/engine/schema";

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("campaign object: shipped migrations", () => {
  it("are the list shipped so far, statement for statement", async () => {
    expect(SCHEMA_VERSION).toBe(8);
    expect(MIGRATIONS.map((m) => m.length)).toEqual([10, 8, 2, 19, 2, 16, 1, 1]);
    // v1..v5, v6 and v7 as they were shipped (their hashes before the next was added), then the whole list.
    expect(await sha256(JSON.stringify(MIGRATIONS.slice(0, 5)))).toBe("f874386e980318d428d416a505665483f4bc0b64bf3eb822c752b5ac0a4ff428");
    expect(await sha256(JSON.stringify(MIGRATIONS.slice(0, 6)))).toBe("3ac4571ec062dd8643ef4a139145e853de7cd96c3187421518bd1c15c5ac9c0e");
    expect(await sha256(JSON.stringify(MIGRATIONS.slice(0, 7)))).toBe("6589ececc4e5e3a356acfa82fb980c26f4736a7c61bee661764f4d3126205f13");
    expect(await sha256(JSON.stringify(MIGRATIONS))).toBe("47e29b690d89099624c838bd782ebe4427328389944784a2a0a07d11d86ad42a");
  });
});
