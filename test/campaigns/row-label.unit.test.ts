// A log message names a contact by its place among the campaign's contacts and its CSV line (header = line 1, as the
// 422s' loc counts): the last of 24 contacts is "Contact 24 (CSV line 25)", never a bare "Row 25".
import { describe, expect, it } from "vitest";
import { contactLabel } from "../../src/campaigns/engine/row-label";

describe("contactLabel", () => {
  it("says the contact's number and its CSV line", () => {
    expect(contactLabel(24, 25)).toBe("Contact 24 (CSV line 25)");
    expect(contactLabel(1, 2)).toBe("Contact 1 (CSV line 2)");
    expect(contactLabel(3, null)).toBe("Contact 3");
  });
});
