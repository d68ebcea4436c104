// Requests as the carriers' own SDKs make them: Telnyx commands (path encoding of the call control id, bodies,
// a voice valid at its service level) compared with the telnyx SDK; Exotel's caller ID as Exotel lists ExoPhones.
import { describe, expect, it } from "vitest";
import { telnyxPathParam } from "../../src/telephony/providers/telnyx/calls";
import { exophone } from "../../src/telephony/providers/exotel/calls";
import { deliverAll, drain, play, runRow, setup, simFault, simRequests, startCall } from "./support";
import { telnyxSdkCommand } from "./sdk-docs";

describe("telnyx commands match what the telnyx SDK sends", () => {
  it("encodes a call control id in the path as the SDK does (v3: keeps its colon)", async () => {
    for (const id of ["v3:AbC-12_x.y~z", "v3:a/b c%d?e#f", "v2:x@y;z=1"]) {
      const sdk = await telnyxSdkCommand(id, "hangup", {});
      expect(`/calls/${telnyxPathParam(id)}/actions/hangup`, id).toBe(sdk.path);
    }
    expect(telnyxPathParam("v3:abc")).toBe("v3:abc");
  });

  it("every command of an answered call has the SDK's path and body, and a voice valid at its service level", async () => {
    const s = await setup("telnyx");
    const runId = await startCall(s);
    const callId = (await runRow(runId)).providerCallId!;
    await deliverAll(await play(callId, "answered"));
    await drain(callId);
    const commands = (await simRequests(s.acct)).filter((r) => r.path.includes("/actions/"));
    expect(commands.map((c) => c.path.split("/").at(-1))).toEqual(["speak", "hangup"]);
    for (const c of commands) {
      const action = c.path.split("/").at(-1) as "speak" | "hangup";
      const sdk = await telnyxSdkCommand(callId, action, JSON.parse(c.body));
      expect(`/v2${sdk.path}`, action).toBe(c.path);
      expect(sdk.body).toEqual(JSON.parse(c.body));
    }
    // Gendered voices are a basic-level feature (the default level is premium).
    expect(JSON.parse(commands[0].body)).toMatchObject({ voice: "female", service_level: "basic", language: "en-US" });
    expect((await runRow(runId)).status).toBe("completed");
  });
});

describe("exotel caller ID", () => {
  it("an Indian ExoPhone is sent as Exotel lists it (national, with the leading 0)", async () => {
    const s = await setup("exotel", {}, undefined, "+918047112345");
    const runId = await startCall(s, { phone_number: "+919876543210" });
    const originate = (await simRequests(s.acct)).find((r) => r.path.endsWith("connect.json"))!;
    const form = new URLSearchParams(originate.body);
    expect(form.get("callerid")).toBe("08047112345");
    expect(form.get("from")).toBe("+919876543210");
    expect((await runRow(runId)).status).toBe("initiated");
  });

  it("formats as libphonenumber does: trunk prefix for geographic and mobile numbers, none for toll-free; others stay E.164", () => {
    expect(exophone("+918047112345")).toBe("08047112345");
    expect(exophone("+919876543210")).toBe("09876543210");
    expect(exophone("+911800123456")).toBe("1800123456");
    expect(exophone("+14155550100")).toBe("+14155550100");
  });
});

describe("a refused carrier command on an answered call", () => {
  it("telnyx refusing speak: the call is hung up and the run ends failed with the carrier's reason", async () => {
    const s = await setup("telnyx");
    const runId = await startCall(s);
    const callId = (await runRow(runId)).providerCallId!;
    await simFault(s.acct, "speak", 422, "voice not available");
    await deliverAll(await play(callId, "answered"));
    await drain(callId);
    const commands = (await simRequests(s.acct)).filter((r) => r.path.includes("/actions/")).map((r) => r.path.split("/").at(-1));
    expect(commands).toEqual(["speak", "hangup"]);
    const run = await runRow(runId);
    expect(run.status).toBe("failed");
    expect(run.error).toContain("voice not available");
    expect(run.error).toContain("hung up");
  });
});
