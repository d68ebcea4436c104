// A call start reads its telephony configuration's active numbers once: the configuration is resolved with them, and
// the caller ID and the carrier's context come from that read, not from two more (each a D1 round trip per call).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countedCall } from "../d1-counter";
import { CALLEE, CALLER, CONTEXT, setup } from "./support";

describe("D1 reads of a call start", () => {
  it("reads the configuration's numbers once, and presents its default caller ID", async () => {
    const s = await setup("twilio");
    const started = await countedCall(
      "POST",
      `/api/v1/public/agent/${s.agent.workflow_uuid}`,
      s.org.key,
      {},
      { phone_number: CALLEE, initial_context: CONTEXT },
    );
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const numberReads = started.sql.filter((q) => /from "phone_numbers"|FROM phone_numbers/i.test(q));
    expect(numberReads, started.sql.join("\n")).toHaveLength(1);
    const run = await env.DB.prepare("SELECT from_number FROM workflow_runs WHERE org_id = ?").bind(s.org.id).first<{ from_number: string }>();
    expect(run?.from_number).toBe(CALLER);
  });
});
