// Asterisk's side of a hand-over to a person, driven by the configuration's events socket (the ARI events object hands
// each event here first). The person's channel (edgedial-xfer-…) enters our app when it answers: warm plays the
// whisper to it alone and waits for PlaybackFinished, cold goes straight on; then the person joins the caller's bridge,
// the transfer settles `connected` (the session ends as transferred) and edgedial's external media channel is hung up.
// The person's channel destroyed before that settles no_answer/failed and the caller stays with the agent; destroyed
// after it, the caller, alone in the bridge, is hung up too (a Stasis bridge keeps its channels until told otherwise).
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { mapQ850 } from "../../telephony/providers/ari/calls";
import { dropAriMediaChannel } from "../../telephony/providers/ari/media";
import { bridgeChannels, bridgePerson, channelOfWhisper, hangupChannel, playWhisper, runIdOfTransferChannel } from "../../telephony/providers/ari/transfer";
import type { CallStatus, ConfigContext } from "../../telephony/providers/types";
import { providerEnvOf } from "../../telephony/provisioning";
import { getRun, type RunRow } from "../runs/runs";
import { callSessionStub } from "../session/stub";
import { legOf, settleTransfer } from "../transfer/transfer";
import type { StoredTransfer, TransferSettled } from "../runs/transfer-record";

/** What a person's phone that never joined the caller means for the transfer. */
const NOT_JOINED: Partial<Record<CallStatus, TransferSettled>> = { busy: "no_answer", no_answer: "no_answer", declined: "no_answer", canceled: "no_answer" };

type Found = { run: RunRow; t: StoredTransfer | null; ctx: ConfigContext; channelId: string };

/** The transfer a person's channel belongs to (its run, record and configuration), or null. */
async function found(env: Env, channelId: string, configContext: () => Promise<ConfigContext | null>): Promise<Found | null> {
  const runId = runIdOfTransferChannel(channelId);
  if (runId === null) return null;
  const [run, ctx] = await Promise.all([getRun(getDb(env), runId), configContext()]);
  if (!run?.providerCallId || !ctx) return null;
  return { run, t: (run.transfer as StoredTransfer | null) ?? null, ctx, channelId };
}

/** Settles the run's transfer once and tells its session (which ends as transferred on `connected`). */
async function settle(env: Env, f: Found, outcome: TransferSettled, message: string | null): Promise<void> {
  if (!f.t || f.t.outcome) return;
  await settleTransfer(env, f.run, f.t, outcome, message);
  try {
    await callSessionStub(env, f.run.id).transferSettled(outcome);
  } catch (err) {
    log("error", "transfer_not_handed_over", { run_id: f.run.id, error: String(err) });
  }
}

/** The person joins the caller; edgedial's media channel goes once the session has left (not reconnected then). */
async function join(env: Env, f: Found): Promise<void> {
  const providerEnv = providerEnvOf(env);
  const added = await bridgePerson(f.ctx, providerEnv, f.run.providerCallId!, f.channelId);
  if (!added.ok) {
    await hangupChannel(f.ctx, providerEnv, f.channelId);
    await settle(env, f, "failed", added.message);
    return;
  }
  await settle(env, f, "connected", null);
  await dropAriMediaChannel(f.ctx, providerEnv, f.run.providerCallId!);
}

/** The person answered (their channel entered our app): the whisper first when warm and there is audio, else join. */
async function answered(env: Env, f: Found): Promise<void> {
  // Nobody waits for this person any more (given up, or the caller left): their phone is hung up.
  if (!f.t || f.t.outcome) {
    await hangupChannel(f.ctx, providerEnvOf(env), f.channelId);
    return;
  }
  if (f.t.mode === "warm") {
    const whisperUrl = (await legOf(env, f.run, f.t, f.run.providerCallId!)).whisper?.url ?? null;
    const played = await playWhisper(f.ctx, providerEnvOf(env), f.channelId, whisperUrl);
    if (played?.ok) return; // PlaybackFinished joins them
    if (played) log("warning", "ari_whisper_refused", { run_id: f.run.id, error: played.message });
  }
  await join(env, f);
}

/** The person's channel is gone: before joining, the transfer did not connect; after, the caller is hung up too. */
async function destroyed(env: Env, f: Found, cause: number, causeTxt: string): Promise<void> {
  if (f.t?.outcome === "connected") {
    await hangupChannel(f.ctx, providerEnvOf(env), f.run.providerCallId!);
    return;
  }
  const status = mapQ850(cause, { answered: false, hungUpByUs: false });
  await settle(env, f, NOT_JOINED[status] ?? "failed", `The person's channel ended: Q.850 cause ${cause}${causeTxt ? ` (${causeTxt})` : ""}`);
}

/** Handles an event of a transfer's channel or whisper; false when the event is not one (the caller's, media's). */
export async function ariTransferEvent(env: Env, ev: any, configContext: () => Promise<ConfigContext | null>): Promise<boolean> {
  const playback = ev?.type === "PlaybackFinished" ? channelOfWhisper(String(ev.playback?.id ?? "")) : null;
  const channelId = playback ?? String(ev?.channel?.id ?? "");
  if (runIdOfTransferChannel(channelId) === null) return false;
  const f = await found(env, channelId, configContext);
  if (!f) return true;
  try {
    if (playback) {
      if (f.t && !f.t.outcome) await join(env, f);
    } else if (ev.type === "StasisStart") await answered(env, f);
    else if (ev.type === "ChannelDestroyed") await destroyed(env, f, Number(ev.cause ?? 0) || 0, String(ev.cause_txt ?? ""));
  } catch (err) {
    log("error", "ari_transfer_event_failed", { run_id: f.run.id, event: String(ev.type), error: String((err as Error)?.message ?? err) });
  }
  return true;
}

/** The caller's call ended after a hand-over: the person's channels still in its bridge are hung up with it. */
export async function endTransferred(env: Env, ctx: ConfigContext, runChannelId: string): Promise<void> {
  const providerEnv = providerEnvOf(env);
  for (const ch of await bridgeChannels(ctx, providerEnv, runChannelId)) {
    if (runIdOfTransferChannel(ch) !== null) await hangupChannel(ctx, providerEnv, ch);
  }
}
