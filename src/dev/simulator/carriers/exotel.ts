// Exotel: form-encoded connect.json with Basic auth, `{RestException}` errors, the media
// stream URL in the request, status callbacks (unsigned) with EventType answered / terminal.
import { basicCredentials } from "../sign";
import { json, randomHex, type Callback, type Carrier, type SimCall } from "../types";

const err = (status: number, message: string) => json(status, { RestException: { Status: status, Message: message } });

/** Reads a form field whichever spelling was sent (the classic API capitalizes, the Voice-AI guide does not). */
function field(form: URLSearchParams, ...names: string[]): string | null {
  for (const n of names) {
    for (const [k, v] of form) if (k.toLowerCase() === n.toLowerCase()) return v;
  }
  return null;
}

async function formOf(req: Request, body: string): Promise<URLSearchParams | null> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("application/x-www-form-urlencoded")) return new URLSearchParams(body);
  if (type.includes("multipart/form-data")) {
    const fd = await new Request("http://x", { method: "POST", headers: { "content-type": type }, body }).formData();
    const out = new URLSearchParams();
    for (const [k, v] of fd) out.append(k, String(v));
    return out;
  }
  return null;
}

export const exotel: Carrier = {
  name: "exotel",
  outcomes: ["answered", "busy", "no_answer", "voicemail", "failed"],

  async createAccount(id) {
    return {
      id,
      provider: "exotel",
      credentials: { account_sid: `sim${randomHex(4)}`, api_key: randomHex(12), api_token: randomHex(20) },
      secret: {},
      applications: [],
    };
  },

  async handle(state, req, path, body) {
    const acct = /^\/v1\/Accounts\/([^/]+?)(?:\.json)?$/.exec(path);
    if (acct) {
      // Account details (a read-only credentials check).
      const c = basicCredentials(req.headers.get("authorization"));
      const account = [...state.accounts.values()].find((a) => a.provider === "exotel" && a.credentials.account_sid === acct[1]);
      if (!account || !c || c.user !== account.credentials.api_key || c.password !== account.credentials.api_token) return err(401, "Authentication failed");
      if (req.method !== "GET") return err(405, "Method not allowed");
      return json(200, { Account: { Sid: acct[1], Status: "active", Type: "Full" } });
    }
    const m = /^\/v1\/Accounts\/([^/]+)\/Calls\/connect(?:\.json)?$/.exec(path);
    if (!m) return null;
    const creds = basicCredentials(req.headers.get("authorization"));
    const account = [...state.accounts.values()].find((a) => a.provider === "exotel" && a.credentials.account_sid === m[1]);
    if (!account || !creds || creds.user !== account.credentials.api_key || creds.password !== account.credentials.api_token)
      return err(401, "Authentication failed");
    state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });
    if (req.method !== "POST") return err(405, "Method not allowed");
    const fault = state.takeFault(account.id, "originate");
    if (fault) return err(fault.status, String(fault.body ?? "Internal error"));
    const form = await formOf(req, body);
    if (!form) return err(400, "Request body must be form-encoded");
    const from = field(form, "from");
    const callerId = field(form, "callerid");
    const streamUrl = field(form, "streamurl");
    if (!from) return err(400, "From is a mandatory parameter");
    if (!/^\+?\d{8,15}$/.test(from)) return err(400, `Invalid From number ${from}`);
    if (!callerId) return err(400, "CallerId is a mandatory parameter");
    // ExoPhones are listed (and matched) in national format, e.g. 08047112345: an Indian number in E.164 is not one.
    if (/^\+?91\d{10}$/.test(callerId))
      return err(400, `CallerId ${callerId} is not an ExoPhone of this account; use it as listed (e.g. 0${callerId.slice(-10)})`);
    if (!streamUrl) return err(400, "streamurl is a mandatory parameter for a Voicebot call");
    if (!/^wss?:\/\//.test(streamUrl) || streamUrl.length > 600) return err(400, "streamurl must be a ws(s) URL of at most 600 characters");
    const limit = field(form, "timelimit");
    if (limit !== null && !(/^\d+$/.test(limit) && Number(limit) <= 14400)) return err(400, "TimeLimit must be at most 14400");
    const sid = randomHex(16);
    const call: SimCall = {
      id: sid,
      provider: "exotel",
      accountId: account.id,
      to: from,
      from: callerId,
      statusUrl: field(form, "statuscallback") ?? undefined,
      streamUrl,
      urls: {},
      amd: false,
      state: "queued",
      pending: [],
      extra: { events: form.getAll("statuscallbackevents[]").concat(form.getAll("StatusCallbackEvents[]")), customField: field(form, "customfield") },
      createdAt: Date.now(),
    };
    state.calls.set(sid, call);
    return json(200, {
      Call: { Sid: sid, AccountSid: m[1], From: from, To: callerId, Status: "in-progress", Direction: "outbound-api", DateCreated: new Date().toISOString() },
    });
  },

  // The stream in the connect request is the call's only applet: once its socket closes the call ends (Exotel
  // retries a failed handshake once, never a dropped stream), and the terminal callback says so.
  async mediaEnded(_state, call) {
    if (!call.statusUrl) return [];
    call.state = "ended";
    return [terminal(call, "completed", "human", "7")];
  },

  async script(_state, call, outcome) {
    if (!call.statusUrl) return [];
    const events = new Set((call.extra.events as string[]) ?? []);
    const form = (fields: Record<string, string>) => statusForm(call, fields);
    const common = commonFields(call);
    const out: Callback[] = [];
    switch (outcome) {
      case "answered":
      case "voicemail":
        call.state = "answered";
        if (events.has("answered")) out.push(form({ ...common, EventType: "answered", Status: "in-progress" }));
        out.push({
          kind: "stream",
          method: "GET",
          url: call.streamUrl!,
          body: "",
          headers: { Upgrade: "websocket" },
          frames: [
            JSON.stringify({ event: "connected" }),
            JSON.stringify({
              event: "start",
              stream_sid: randomHex(8),
              start: { call_sid: call.id, media_format: { encoding: "raw/slin", sample_rate: "8000" } },
            }),
          ],
        });
        call.state = "ended";
        out.push(terminal(call, "completed", outcome === "voicemail" ? "machine" : "human", "7"));
        break;
      case "busy":
        out.push(terminal(call, "busy"));
        break;
      case "no_answer":
        out.push(terminal(call, "no-answer"));
        break;
      case "failed":
        out.push(terminal(call, "failed"));
        break;
      default:
        return [];
    }
    if (outcome !== "answered" && outcome !== "voicemail") call.state = "ended";
    return out;
  },
};

const statusForm = (call: SimCall, fields: Record<string, string>): Callback => ({
  kind: "status",
  method: "POST",
  url: call.statusUrl!,
  body: new URLSearchParams(fields).toString(),
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
});

const commonFields = (call: SimCall) => ({
  CallSid: call.id,
  To: call.from,
  From: call.to,
  Direction: "outbound-api",
  CustomField: String(call.extra.customField ?? ""),
  DateUpdated: new Date().toISOString(),
});

/** The terminal status callback of a call. */
const terminal = (call: SimCall, status: string, answeredBy = "", duration = "0") =>
  statusForm(call, {
    ...commonFields(call),
    EventType: "terminal",
    Status: status,
    RecordingUrl: "",
    ConversationDuration: duration,
    "Legs[0][Status]": status,
    "Legs[0][OnCallDuration]": duration,
    "Legs[0][AnsweredBy]": answeredBy,
  });
