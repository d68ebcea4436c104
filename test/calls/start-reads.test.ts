// A call start reads its telephony configuration's active numbers once: the configuration is resolved with them, and
// the caller ID and the carrier's context come from that read, not from more (each a D1 round trip per call). The same
// holds for a call that comes in: its inbound URL names the configuration, read with its numbers in one statement.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countedCall, countedFetch } from "../d1-counter";
import { CALLING, dial, inboundSetup, runsOf } from "./inbound-support";
import { CALLEE, CALLER, CONTEXT, callbackRequest, setup, sim } from "./support";

// activeNumbersOf's statement (the numbers of a list of configurations), and the configuration's row (alone or with
// its numbers). The number called is read by its address as well: that statement is neither.
const numbersAlone = (sql: string[]) => sql.filter((q) => /^select [\s\S]* from "phone_numbers"/i.test(q) && /json_each/i.test(q));
const configReads = (sql: string[]) => sql.filter((q) => /^select [\s\S]* from "telephony_configs"/i.test(q));

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

  it("a call that comes in reads its configuration with its numbers in one statement", async () => {
    // The simulated Twilio account owns the number, so attaching an agent can point its VoiceUrl here.
    const { s } = await inboundSetup("twilio", (s) => sim("POST", `/accounts/${s.acct.id}/numbers`, { number: CALLER }));
    const answered = await countedFetch(callbackRequest(await dial(s)), { VOICE_AGENT: "echo" });
    expect(answered.status, answered.text).toBe(200);
    expect(answered.text).toContain("<Connect><Stream url=");
    const log = answered.sql.join("\n");
    expect(configReads(answered.sql), log).toHaveLength(1);
    expect(configReads(answered.sql)[0], log).toMatch(/json_group_array/);
    expect(numbersAlone(answered.sql), log).toHaveLength(0);
    const [run] = await runsOf(s.org.id);
    expect(run).toMatchObject({ direction: "inbound", phone_number: CALLING, from_number: CALLER });
  });
});
