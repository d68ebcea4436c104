// Telnyx calls that come in, as Call Control v2 documents them: the application's record (GET and PATCH
// /v2/call_control_applications/{id}, where PATCH takes application_name and webhook_event_url), a caller's call
// announced by a signed `call.initiated` (direction incoming, state parked) to the application's webhook_event_url,
// and the commands that settle it: `answer` (its webhook_url and stream settings; call.answered follows) and `reject`
// (cause CALL_REJECTED or USER_BUSY, on a call not yet answered; call.hangup follows).
import { E164, inboundCall, json, randomHex, type Account, type Callback, type SimCall, type SimState } from "../types";

type Err = (status: number, code: string, title: string, detail: string, pointer?: string) => Response;
type Hook = (account: Account, call: SimCall, type: string, payload: Record<string, unknown>) => Promise<Callback>;

const view = (a: Account["applications"][number]) => ({
  id: a.id,
  application_name: a.name,
  webhook_event_url: a.url,
  active: true,
  record_type: "call_control_application",
});

/** GET and PATCH of one Call Control application; null for any other path. */
export function telnyxApplication(account: Account, method: string, path: string, p: Record<string, any>, err: Err): Response | null {
  const m = /^\/v2\/call_control_applications\/([^/]+)$/.exec(path);
  if (!m) return null;
  const app = account.applications.find((a) => a.id === decodeURIComponent(m[1]));
  if (!app) return err(404, "10005", "Resource not found", "Call control application not found");
  if (method === "GET") return json(200, { data: view(app) });
  if (method !== "PATCH") return err(405, "10015", "Method not allowed", `${method} is not allowed here`);
  if (typeof p.application_name !== "string" || !p.application_name)
    return err(422, "10015", "Invalid value", "application_name is required", "/application_name");
  if (typeof p.webhook_event_url !== "string" || !/^https?:\/\//.test(p.webhook_event_url))
    return err(422, "10015", "Invalid value", "webhook_event_url is required and must be a URL", "/webhook_event_url");
  app.name = p.application_name;
  app.url = p.webhook_event_url;
  return json(200, { data: view(app) });
}

/** `answer` and `reject` on a call; null for another command. */
export async function telnyxInboundCommand(account: Account, call: SimCall, action: string, p: Record<string, any>, err: Err, hook: Hook) {
  if (action === "reject") {
    if (!["CALL_REJECTED", "USER_BUSY"].includes(p.cause)) return err(422, "10015", "Invalid value", "cause must be CALL_REJECTED or USER_BUSY", "/cause");
    if (call.state === "answered") return err(422, "90018", "Call has already been answered", "Only a call not yet answered can be rejected.");
    call.state = "ended";
    call.extra.rejected = p.cause;
    const cause = p.cause === "USER_BUSY" ? { hangup_cause: "user_busy", sip_hangup_cause: "486" } : { hangup_cause: "call_rejected", sip_hangup_cause: "603" };
    call.pending.push(await hook(account, call, "call.hangup", { ...cause, hangup_source: "callee", state: "hangup" }));
    return json(200, { data: { result: "ok" } });
  }
  if (action !== "answer") return null;
  if (call.extra.direction !== "inbound") return json(200, { data: { result: "ok" } });
  if (call.state === "answered") return err(422, "90018", "Call has already been answered", "This call is already answered.");
  if (p.webhook_url !== undefined && !/^https?:\/\//.test(String(p.webhook_url)))
    return err(422, "10015", "Invalid value", "webhook_url must be a URL", "/webhook_url");
  if (p.stream_url !== undefined && !/^wss?:\/\//.test(String(p.stream_url)))
    return err(422, "10015", "Invalid value", "stream_url must be a WebSocket URL", "/stream_url");
  if (p.stream_bidirectional_mode !== undefined && !["mp3", "rtp"].includes(p.stream_bidirectional_mode))
    return err(422, "10015", "Invalid value", "stream_bidirectional_mode must be mp3 or rtp", "/stream_bidirectional_mode");
  // Later webhooks of this call go to the answer's webhook_url; its stream connects once answered.
  if (typeof p.webhook_url === "string") call.statusUrl = p.webhook_url;
  if (typeof p.stream_url === "string") call.streamUrl = p.stream_url;
  call.state = "answered";
  call.extra.answeredAt = new Date().toISOString();
  call.extra.answer = p;
  call.pending.push(await hook(account, call, "call.answered", { state: "answered", start_time: call.extra.answeredAt }));
  return json(200, { data: { result: "ok" } });
}

/** A caller dials `to`: the call registered (parked, ringing) and its signed call.initiated for the test to send. */
export async function placeTelnyxInbound(account: Account, state: SimState, o: { to: string; from: string; url?: string }, hook: Hook) {
  if (!E164.test(o.to)) throw new Error(`${o.to} is not an E.164 number`);
  const app = account.applications[0];
  const url = o.url ?? app?.url;
  if (!url) throw new Error(`${o.to} routes nowhere`);
  const id = `v3:${randomHex(20)}`;
  const call = inboundCall(state, {
    id,
    provider: "telnyx",
    accountId: account.id,
    to: o.to,
    from: o.from,
    statusUrl: url,
    state: "ringing",
    extra: { legId: crypto.randomUUID(), sessionId: crypto.randomUUID(), connectionId: app?.id, clientState: null },
  });
  return { ...(await hook(account, call, "call.initiated", { state: "parked", direction: "incoming" })), kind: "answer" as const };
}
