// The simulated Telnyx's commands for handing a call to a person, as Call Control v2 documents them: `transfer` (Telnyx
// dials the person as a new leg, whose webhooks go to the command's webhook_url with target_leg_client_state; the
// leg's outcome is then played like any call's), `playback_start` (call.playback.started, then .ended), `bridge` (two
// live calls joined: call.bridged on each) and `streaming_stop` (streaming.stopped).
import { E164, json, randomHex, type Account, type Callback, type SimCall, type SimState } from "../types";

type Webhook = (account: Account, call: SimCall, eventType: string, payload: Record<string, unknown>) => Promise<Callback>;
type Err = (status: number, code: string, title: string, detail: string, pointer?: string) => Response;

export const TRANSFER_COMMANDS = ["transfer", "bridge", "playback_start", "streaming_stop"];

/** One of TRANSFER_COMMANDS on a live call: its answer, with the webhooks it causes queued on the calls they concern. */
export async function transferCommand(
  state: SimState,
  account: Account,
  call: SimCall,
  name: string,
  p: Record<string, any>,
  webhook: Webhook,
  err: Err,
): Promise<Response> {
  const done = () => json(200, { data: { result: "ok" } });
  if (name === "playback_start") {
    if ([p.audio_url, p.media_name, p.playback_content].filter((v) => v !== undefined).length !== 1)
      return err(422, "10015", "Invalid value", "Exactly one of audio_url, media_name or playback_content is required", "/audio_url");
    if (p.audio_url !== undefined && !/^https?:\/\//.test(String(p.audio_url)))
      return err(422, "10015", "Invalid value", "audio_url must be a URL", "/audio_url");
    call.extra.played = [...((call.extra.played as string[]) ?? []), String(p.audio_url ?? p.media_name ?? "")];
    const media = { media_url: p.audio_url ?? null, media_name: p.media_name ?? null };
    call.pending.push(
      await webhook(account, call, "call.playback.started", media),
      await webhook(account, call, "call.playback.ended", { ...media, status: "completed" }),
    );
    return done();
  }
  if (name === "streaming_stop") {
    call.extra.streaming = false;
    call.pending.push(await webhook(account, call, "streaming.stopped", { stream_url: call.streamUrl ?? null }));
    return done();
  }
  if (name === "bridge") {
    const otherId = String(p.call_control_id ?? "");
    const other = state.calls.get(otherId);
    if (!otherId) return err(422, "10015", "Invalid value", "call_control_id (the call to bridge with) is required", "/call_control_id");
    if (!other || other.accountId !== account.id || other.state !== "answered" || call.state !== "answered")
      return err(422, "90018", "Call has already ended", "Both calls must be active and answered to be bridged.");
    call.extra.bridgedWith = other.id;
    other.extra.bridgedWith = call.id;
    call.pending.push(await webhook(account, call, "call.bridged", { state: "bridged" }));
    other.pending.push(await webhook(account, other, "call.bridged", { state: "bridged" }));
    return done();
  }
  // transfer: the person's leg, a new call Telnyx places and bridges with this one when it answers.
  if (typeof p.to !== "string" || !(E164.test(p.to) || /^sip:/.test(p.to)))
    return err(422, "10016", "Invalid 'to' address", `The destination ${p.to} is not a valid E.164 number or SIP URI.`, "/to");
  if (p.from !== undefined && (typeof p.from !== "string" || !E164.test(p.from)))
    return err(422, "10016", "Invalid 'from' address", `The caller ID ${p.from} is not a valid E.164 number.`, "/from");
  if (p.timeout_secs !== undefined && !(Number.isInteger(p.timeout_secs) && p.timeout_secs >= 5 && p.timeout_secs <= 600))
    return err(422, "10015", "Invalid value", "timeout_secs must be between 5 and 600", "/timeout_secs");
  if (p.webhook_url !== undefined && !/^https?:\/\//.test(String(p.webhook_url)))
    return err(422, "10015", "Invalid value", "webhook_url must be a URL", "/webhook_url");
  if (p.target_leg_client_state !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(String(p.target_leg_client_state)))
    return err(422, "10015", "Invalid value", "target_leg_client_state must be a valid Base-64 encoded string", "/target_leg_client_state");
  const id = `v3:${randomHex(20)}`;
  state.calls.set(id, {
    id,
    provider: "telnyx",
    accountId: account.id,
    to: p.to,
    // Telnyx documents the caller ID as the original call's `to` when none is given.
    from: p.from ?? call.to,
    statusUrl: p.webhook_url ?? call.statusUrl,
    urls: {},
    amd: false,
    state: "queued",
    pending: [],
    extra: {
      legId: crypto.randomUUID(),
      sessionId: call.extra.sessionId,
      connectionId: call.extra.connectionId,
      clientState: p.target_leg_client_state ?? null,
      transferOf: call.id,
    },
    createdAt: Date.now(),
  });
  call.extra.transferLeg = id;
  return done();
}
