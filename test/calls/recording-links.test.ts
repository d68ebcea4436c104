// The recording link is the only key to a recording, so what it signs matters: its expiry (a correctly signed link
// stops working once its time is up, on the Worker's clock, not just when someone edits the number) and its run (a
// valid link for one run opens no other run's recording). The links come from the API, as a client gets them.
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { RECORDING_URL_TTL_SECONDS } from "../../src/calls/runs/recordings";
import { clock } from "../../src/lib/clock";
import { getDb } from "../../src/lib/db";
import { workflowRuns } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import { runApi, setup, startCall, type Setup } from "./support";

afterEach(() => clock.set(null));

/** A started call whose run holds a recording (what a finished recorded call leaves: the key on the run, the PCM in R2). */
async function recordedRun(s: Setup, fill: number) {
  const runId = await startCall(s);
  const key = `recordings/${s.org.id}/${runId}.pcm`;
  await env.UPLOADS.put(key, new Uint8Array(640).fill(fill));
  await getDb(env).update(workflowRuns).set({ recordingKey: key, recordingRate: 8000 }).where(eq(workflowRuns.id, runId)).run();
  return runId;
}

const fetchLink = (url: string) => exports.default.fetch(new Request(url));

describe("recording links", () => {
  it("a correctly signed link works until its expiry and is refused after it", async () => {
    const s = await setup("twilio");
    const runId = await recordedRun(s, 7);
    const now = Date.now();
    clock.set(now);
    const { recording_url } = await runApi(s, runId);
    const expires = Number(new URL(recording_url).searchParams.get("expires"));
    expect(expires).toBe(Math.floor(now / 1000) + RECORDING_URL_TTL_SECONDS);

    // Still inside its window: served.
    clock.set(expires * 1000 - 1000);
    const ok = await fetchLink(recording_url);
    expect(ok.status).toBe(200);
    expect(new Uint8Array(await ok.arrayBuffer()).subarray(44)).toEqual(new Uint8Array(640).fill(7));

    // The same link, untouched, once its time is up: refused, whatever its valid signature says.
    clock.set(expires * 1000 + 1000);
    const late = await fetchLink(recording_url);
    expect(late.status).toBe(403);
    expect(await late.json()).toMatchObject({ detail: "Invalid or expired recording link" });
    clock.set(expires * 1000 + 24 * 3600 * 1000);
    expect((await fetchLink(recording_url)).status).toBe(403);
  });

  it("a valid link for one run does not open another run's recording (the run id is signed)", async () => {
    const s = await setup("twilio");
    const runA = await recordedRun(s, 1);
    const runB = await recordedRun(s, 2);
    const linkA = (await runApi(s, runA)).recording_url as string;
    const linkB = (await runApi(s, runB)).recording_url as string;
    // Both links are good for their own run (so a refusal below is the signature's, not a missing recording's).
    expect((await fetchLink(linkA)).status).toBe(200);
    const ownB = await fetchLink(linkB);
    expect(ownB.status).toBe(200);
    expect(new Uint8Array(await ownB.arrayBuffer()).subarray(44)).toEqual(new Uint8Array(640).fill(2));

    // Run A's expiry and signature on run B's path (and the other way round): refused.
    const swapped = (link: string, from: number, to: number) => link.replace(`/recordings/${from}?`, `/recordings/${to}?`);
    expect(swapped(linkA, runA, runB)).not.toBe(linkA);
    const aOnB = await fetchLink(swapped(linkA, runA, runB));
    expect(aOnB.status).toBe(403);
    expect(await aOnB.json()).toMatchObject({ detail: "Invalid or expired recording link" });
    expect((await fetchLink(swapped(linkB, runB, runA))).status).toBe(403);
  });
});
