// Keys the agent presses on a live call reach a real Asterisk 22's far end. The callee is a sipp UAS
// (test/integration/uas-dtmf-echo.xml, started by sipp-echo.global.ts) that negotiates RFC 4733 telephone-event and
// sends every RTP packet back as it came. The session's keypad agent presses the run's `keypad_press` keys as the call
// starts: the session's sendDtmf asks ARI (POST /channels/{caller}/dtmf), Asterisk puts the keys on the wire to sipp
// as RFC 4733 events, sipp returns them, and Asterisk hears them as keys pressed on the callee's PJSIP channel:
// ChannelDtmfReceived on that channel, seen by a second ARI application subscribed to it (and by the run's session,
// whose agent logs each key it heard).
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { eq } from "drizzle-orm";
import { callSessionStub } from "../../src/calls/session/stub";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { call } from "../helpers";
import { ARI, ARI_PASSWORD, ARI_USER, finalStatus, setupAri } from "./ari-support";

const ariAuth = { Authorization: `Basic ${btoa(`${ARI_USER}:${ARI_PASSWORD}`)}` };
const ari = (method: string, path: string) => fetch(`${ARI}/ari${path}`, { method, headers: ariAuth });
const runOf = (runId: number) => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, runId)).get();
const KEYS = "159*0";

type AriEvent = { type: string; digit?: string; duration_ms?: number; channel?: { id: string; name: string } };

/** A second ARI application of the test's own: its events socket, and every event it was sent. */
async function watcher() {
  const app = `edgedial-it-watch-${crypto.randomUUID().slice(0, 8)}`;
  const res = await fetch(`${ARI}/ari/events?${new URLSearchParams({ app })}`, { headers: { ...ariAuth, Upgrade: "websocket" } });
  const ws = res.webSocket;
  expect(ws, `ARI events socket: HTTP ${res.status}`).toBeTruthy();
  ws!.accept();
  const events: AriEvent[] = [];
  ws!.addEventListener("message", (e) => events.push(JSON.parse(String(e.data)) as AriEvent));
  return { app, events, close: () => ws!.close(1000, "done") };
}

async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("ARI keypad against Asterisk", () => {
  it.runIf(inject("sipp"))(
    "the agent's keys go out as RFC 4733 events on the callee's PJSIP channel: Asterisk hears them back there (ChannelDtmfReceived)",
    { timeout: 40_000 },
    async () => {
      const s = await setupAri();
      const watch = await watcher();
      try {
        const started = await call("POST", `/api/v1/public/agent/${s.agentUuid}`, {
          key: s.org.key,
          body: { phone_number: "PJSIP/sipp/sip:300@127.0.0.1:5071", initial_context: { keypad_press: KEYS } },
        });
        expect(started.status, started.text).toBe(200);
        const runId = started.json.workflow_run_id as number;
        // While the callee's phone rings: the session gets the keypad agent, and our watcher the callee's channel.
        await callSessionStub(env, runId).prepare({ agent: "keypad" });
        const caller = (await runOf(runId))!.providerCallId!;
        const sub = await ari("POST", `/applications/${watch.app}/subscription?eventSource=${encodeURIComponent(`channel:${caller}`)}`);
        expect(sub.status, await sub.text()).toBe(200);

        // Every key, in order, heard by Asterisk on the callee's channel (the PJSIP channel to sipp). Asterisk both sends
        // and receives keys on that one channel here, so a key coming back while it still sends the next is held and
        // reported again after it: adjacent repeats are one key (KEYS has none).
        const heard = () => watch.events.filter((e) => e.type === "ChannelDtmfReceived" && e.channel?.id === caller);
        const keys = () =>
          heard()
            .map((e) => e.digit)
            .filter((d, i, all) => d !== all[i - 1])
            .join("");
        await until(keys, (k) => k.length >= KEYS.length, 20_000);
        expect(keys()).toBe(KEYS);
        for (const e of heard()) {
          expect(e.channel?.name).toMatch(/^PJSIP\/sipp-/);
          expect(e.duration_ms).toBeGreaterThan(0);
        }

        // The session's agent pressed them once (one ARI request), and each came back to it as the callee's key (here
        // more than once: the media socket's DTMF_END and the events' ChannelDtmfReceived of a held key arrive seconds
        // apart, beyond the session's 2 s window for one press reported twice).
        const snap = await until(
          () => callSessionStub(env, runId).snapshot(),
          (x) => x.turns.some((t) => t.text === "key 0"),
          5000,
        );
        expect(snap.turns.filter((t) => t.role === "agent").map((t) => t.text)).toEqual([`pressed ${KEYS}`]);
        const calleeKeys = new Set(snap.turns.filter((t) => t.role === "callee").map((t) => t.text.replace("key ", "")));
        expect([...calleeKeys].sort()).toEqual([...KEYS].sort());

        expect((await ari("DELETE", `/channels/${caller}`)).status).toBe(204);
        expect(await finalStatus(runId, 10_000)).toBe("completed");
      } finally {
        watch.close();
      }
    },
  );
});
