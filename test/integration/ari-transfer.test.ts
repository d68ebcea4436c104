// A live call handed to a person on a real Asterisk 22: the caller is a sipp UAS (PJSIP/100@sipp) whose audio reaches
// the run's call session over chan_websocket; the session's transfer test agent asks for a cold (or warm) transfer to a second
// PJSIP endpoint (PJSIP/200@sipp, the same UAS, which answers after 1.5 s). Asterisk originates the person's channel into
// our app, and on its answer it joins the caller's bridge while edgedial's external media channel leaves: the bridge
// holds exactly the caller and the person, the run's transfer is connected, the session ended `transferred`. When the
// caller hangs up, the person's channel goes with it.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { eq } from "drizzle-orm";
import { callSessionStub } from "../../src/calls/session/stub";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { mediaIds } from "../../src/telephony/providers/ari/media";
import { call } from "../helpers";
import { ARI, ARI_PASSWORD, ARI_USER, finalStatus, setupAri } from "./ari-support";

const ariAuth = { Authorization: `Basic ${btoa(`${ARI_USER}:${ARI_PASSWORD}`)}` };
const ari = (method: string, path: string) => fetch(`${ARI}/ari${path}`, { method, headers: ariAuth });
const runOf = (runId: number) => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, runId)).get();

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("ARI transfer against Asterisk", () => {
  // Warm also plays the whisper to the person's channel first (`sound:` of the whisper's URL). This Asterisk cannot fetch
  // it (the workerd under test serves no port, and the peers' Asterisk loads no res_http_media_cache): the playback
  // fails, and the two are joined on its PlaybackFinished all the same.
  it.runIf(inject("sipp")).each(["cold", "warm"] as const)(
    "%s: the person's PJSIP channel answers, joins the caller's bridge, edgedial's media channel leaves, the run ends transferred",
    { timeout: 40_000 },
    async (mode) => {
      const s = await setupAri();
      const started = await call("POST", `/api/v1/public/agent/${s.agentUuid}`, {
        key: s.org.key,
        body: { phone_number: "PJSIP/100@sipp", initial_context: { transfer_to: "PJSIP/200@sipp", transfer_mode: mode, transfer_timeout: "15" } },
      });
      expect(started.status, started.text).toBe(200);
      const runId = started.json.workflow_run_id as number;
      // While the caller's phone rings: the session gets the agent that transfers as soon as the call starts.
      await callSessionStub(env, runId).prepare({ agent: "transfer" });
      const caller = (await runOf(runId))!.providerCallId!;
      const { bridgeId, mediaChannelId } = mediaIds(caller);

      // The person's channel was originated into our app and answered; the transfer settled.
      const run = await until(
        () => runOf(runId),
        (r) => (r?.transfer as { outcome?: string } | null)?.outcome != null,
        25_000,
      );
      expect(run?.transfer).toMatchObject({ destination: "PJSIP/200@sipp", mode, outcome: "connected" });
      const bridge = await until(
        async () => (await (await ari("GET", `/bridges/${bridgeId}`)).json()) as { channels: string[] },
        (b) => b.channels.length === 2 && !b.channels.includes(mediaChannelId),
        5000,
      );
      const person = bridge.channels.find((c) => c !== caller)!;
      expect(person).toMatch(new RegExp(`^edgedial-xfer-${runId}-[0-9a-f]{8}$`));
      expect(bridge.channels.sort()).toEqual([caller, person].sort());
      // The person's channel is a real PJSIP call to the second endpoint, answered.
      const channel = (await (await ari("GET", `/channels/${person}`)).json()) as { name: string; state: string };
      expect(channel.name).toMatch(/^PJSIP\/sipp-/);
      expect(channel.state).toBe("Up");
      // Edgedial's media channel is gone, and the session ended as transferred (the caller was never hung up).
      expect((await ari("GET", `/channels/${mediaChannelId}`)).status).toBe(404);
      const snap = await until(
        () => callSessionStub(env, runId).snapshot(),
        (x) => x.endReason !== null,
        5000,
      );
      expect(snap.endReason).toBe("transferred");
      expect((await ari("GET", `/channels/${caller}`)).status).toBe(200);

      // The caller hangs up: the person's channel goes too, and the run completes.
      expect((await ari("DELETE", `/channels/${caller}`)).status).toBe(204);
      expect(await finalStatus(runId, 10_000)).toBe("completed");
      expect(
        await until(
          async () => (await ari("GET", `/channels/${person}`)).status,
          (st) => st === 404,
          5000,
        ),
      ).toBe(404);
    },
  );
});
