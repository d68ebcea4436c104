// Twilio as its documentation describes it: form-encoded Calls.json with Basic auth, JSON errors
// {code, message, more_info, status}, X-Twilio-Signature on every callback.
import { basicCredentials, twilioSign } from "../sign";
import { afterStream, redirectRequest } from "./after-stream";
import { E164, json, randomHex, type Callback, type Carrier, type Outcome, type SimCall } from "../types";

const err = (status: number, code: number, message: string) => json(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

const EVENTS = new Set(["initiated", "ringing", "answered", "completed"]);

async function signed(token: string, url: string, fields: Record<string, string>, kind: Callback["kind"]): Promise<Callback> {
  const params = Object.entries(fields);
  const body = new URLSearchParams(params).toString();
  return {
    kind,
    method: "POST",
    url,
    body,
    headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": await twilioSign(token, url, params) },
  };
}

/** The calls nobody answered: Twilio's final CallStatus and SIP response code, and whether the callee's phone rang first. */
const UNANSWERED: Partial<Record<Outcome, { status: string; sip?: string; rang: boolean }>> = {
  busy: { status: "busy", sip: "486", rang: true },
  declined: { status: "busy", sip: "603", rang: true },
  no_answer: { status: "no-answer", sip: "480", rang: true },
  failed: { status: "failed", sip: "404", rang: false },
  canceled: { status: "canceled", rang: true },
};

export const twilio: Carrier = {
  name: "twilio",
  outcomes: ["answered", "busy", "no_answer", "voicemail", "failed", "declined", "canceled"],

  async createAccount(id) {
    const sid = `AC${randomHex(16)}`;
    return { id, provider: "twilio", credentials: { account_sid: sid, auth_token: randomHex(16) }, secret: {}, applications: [] };
  },

  async handle(state, req, path, body) {
    const acct = /^\/2010-04-01\/Accounts\/([^/]+)\.json$/.exec(path);
    if (acct) {
      // Fetch the account (a read-only credentials check).
      const account = [...state.accounts.values()].find((a) => a.provider === "twilio" && a.credentials.account_sid === acct[1]);
      const c = basicCredentials(req.headers.get("authorization"));
      if (!account || !c || c.user !== acct[1] || c.password !== account.credentials.auth_token) return err(401, 20003, "Authenticate");
      if (req.method !== "GET") return err(405, 20004, "Method not allowed");
      return json(200, { sid: acct[1], friendly_name: "Simulated account", status: "active", type: "Full" });
    }
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls(?:\/([^/]+))?\.json$/.exec(path);
    if (!m) return null;
    const account = [...state.accounts.values()].find((a) => a.provider === "twilio" && a.credentials.account_sid === m[1]);
    const creds = basicCredentials(req.headers.get("authorization"));
    if (!account || !creds || creds.user !== m[1] || creds.password !== account.credentials.auth_token) return err(401, 20003, "Authenticate");
    state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });
    if (req.method !== "POST") return err(405, 20004, "Method not allowed");
    if (!(req.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded")) return err(400, 21601, "Request body must be form-encoded");
    const form = new URLSearchParams(body);

    if (m[2]) {
      // Update (hang up) a call.
      const call = state.calls.get(m[2]);
      if (!call || call.accountId !== account.id) return err(404, 20404, `The requested resource ${path} was not found`);
      const twiml = form.get("Twiml");
      if (twiml !== null && form.get("Status") === null) {
        // Modify a call in progress: its TwiML is replaced (a transfer's <Dial>, a <Conference>); the stream it ran ends.
        if (call.state === "ended") return err(400, 21220, "Call is not in-progress. Cannot redirect.");
        if (!twiml.startsWith("<") || !twiml.includes("<Response>")) return err(400, 12100, "Document parse failure");
        call.extra.twiml = twiml;
        call.extra.apiHangup = true;
        return json(200, { sid: call.id, status: call.state === "answered" ? "in-progress" : call.state });
      }
      const want = form.get("Status");
      if (want !== "canceled" && want !== "completed") return err(400, 21218, "Invalid Status: must be canceled or completed");
      // Hung up through the API: the call does not go on to the verb after its stream.
      call.extra.apiHangup = true;
      const ended = call.state === "ended";
      if (!ended && ((want === "canceled" && call.state !== "answered") || (want === "completed" && call.state === "answered"))) {
        const final = want === "canceled" ? "canceled" : "completed";
        call.state = "ended";
        call.pending.push(
          await signed(
            account.credentials.auth_token,
            call.statusUrl!,
            { ...base(call, account.credentials.account_sid), CallStatus: final, CallDuration: final === "completed" ? secondsSinceAnswer(call) : "0" },
            "status",
          ),
        );
      }
      const status = call.state === "answered" ? "in-progress" : ((call.extra.finalStatus as string) ?? (want === "canceled" ? "canceled" : "completed"));
      return json(200, { sid: call.id, status });
    }

    const fault = state.takeFault(account.id, "originate");
    if (fault) return err(fault.status, 20500, (fault.body as string) ?? "Internal Server Error");
    const to = form.get("To") ?? "";
    const from = form.get("From") ?? "";
    if (!to) return err(400, 21201, "No 'To' number is specified");
    if (!E164.test(to)) return err(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    if (!from) return err(400, 21603, "A 'From' phone number is required.");
    if (!E164.test(from)) return err(400, 21212, `The 'From' number ${from} is not a valid phone number, shortcode, or alphanumeric sender ID.`);
    if (!form.get("Url") && !form.get("Twiml")) return err(400, 21205, "Url or Twiml is required");
    const inline = form.get("Twiml");
    if (inline !== null && !inline.includes("<Response>")) return err(400, 12100, "Document parse failure");
    const timeout = form.get("Timeout");
    if (timeout !== null && !(/^\d+$/.test(timeout) && Number(timeout) >= 1 && Number(timeout) <= 600))
      return err(400, 21208, `Timeout must be between 1 and 600, got ${timeout}`);
    const events = form.getAll("StatusCallbackEvent");
    if (events.some((e) => !EVENTS.has(e))) return err(400, 21626, "Invalid StatusCallbackEvent");
    const md = form.get("MachineDetection");
    if (md !== null && md !== "Enable" && md !== "DetectMessageEnd") return err(400, 21624, "Invalid MachineDetection");

    const sid = `CA${randomHex(16)}`;
    const call: SimCall = {
      id: sid,
      provider: "twilio",
      accountId: account.id,
      to,
      from,
      answerUrl: form.get("Url") ?? undefined,
      statusUrl: form.get("StatusCallback") ?? undefined,
      urls: {},
      amd: md !== null,
      state: "queued",
      pending: [],
      extra: { events, ...(inline !== null ? { twiml: inline } : {}) },
      createdAt: Date.now(),
    };
    state.calls.set(sid, call);
    return json(201, {
      sid,
      account_sid: account.credentials.account_sid,
      to,
      from,
      status: "queued",
      direction: "outbound-api",
      api_version: "2010-04-01",
      uri: `/2010-04-01/Accounts/${m[1]}/Calls/${sid}.json`,
    });
  },

  // <Connect><Stream> blocks until the socket closes; then the verb after </Connect> runs: a Redirect fetches the next
  // TwiML (a signed request, as every request Twilio makes), and a document that has run out ends the call.
  async mediaEnded(state, call, document) {
    if (call.extra.apiHangup) return [];
    const account = state.accounts.get(call.accountId)!;
    const token = account.credentials.auth_token;
    const next = afterStream(document, "Connect");
    const fields = { ...base(call, account.credentials.account_sid), CallStatus: "in-progress" };
    if (next.kind === "redirect") {
      if (next.method === "POST") return [await signed(token, next.url, fields, "answer")];
      const { url } = redirectRequest(next, fields);
      return [{ kind: "answer", method: "GET", url, body: "", headers: { "X-Twilio-Signature": await twilioSign(token, url, []) } }];
    }
    call.state = "ended";
    return call.statusUrl ? [await signed(token, call.statusUrl, { ...fields, CallStatus: "completed", CallDuration: "7" }, "status")] : [];
  },

  // A status sent after the call's media (the demo's calls): Timestamp is when the event fired, CallDuration the
  // seconds from the answer to the end of the call's media (the hang-up), as Twilio reports them; the signature is Twilio's over the new parameters.
  async restamp(state, call, cb) {
    if (cb.kind !== "status") return cb;
    const account = state.accounts.get(call.accountId)!;
    const fields = Object.fromEntries(new URLSearchParams(cb.body));
    if (fields.Timestamp) fields.Timestamp = new Date().toUTCString();
    const answeredAt = call.extra.answeredAtMs as number | undefined;
    const endedAt = (call.extra.mediaEndedAtMs as number | undefined) ?? Date.now();
    if (fields.CallStatus === "completed" && answeredAt) fields.CallDuration = String(Math.max(0, Math.round((endedAt - answeredAt) / 1000)));
    return signed(account.credentials.auth_token, cb.url, fields, cb.kind);
  },

  async script(state, call, outcome) {
    const account = state.accounts.get(call.accountId)!;
    const token = account.credentials.auth_token;
    const events = new Set((call.extra.events as string[]) ?? []);
    const b = base(call, account.credentials.account_sid);
    let seq = 0;
    const status = async (event: string, fields: Record<string, string>) =>
      call.statusUrl && (event === "completed" || events.has(event))
        ? [
            await signed(
              token,
              call.statusUrl,
              { ...b, ...fields, CallbackSource: "call-progress-events", SequenceNumber: String(seq++), Timestamp: new Date().toUTCString() },
              "status",
            ),
          ]
        : [];
    const answer = async (answeredBy?: string) =>
      call.answerUrl
        ? [await signed(token, call.answerUrl, { ...b, CallStatus: "in-progress", ...(call.amd && answeredBy ? { AnsweredBy: answeredBy } : {}) }, "answer")]
        : [];
    const out: Callback[] = [...(await status("initiated", { CallStatus: "initiated" }))];
    const end = (s: string) => {
      call.state = "ended";
      call.extra.finalStatus = s;
    };
    switch (outcome) {
      case "answered":
      case "voicemail": {
        const by = outcome === "voicemail" ? "machine_end_beep" : "human";
        call.state = "answered";
        call.extra.answeredAtMs = Date.now();
        out.push(...(await status("ringing", { CallStatus: "ringing" })), ...(await answer(by)), ...(await status("answered", { CallStatus: "in-progress" })));
        end("completed");
        out.push(
          ...(await status("completed", { CallStatus: "completed", CallDuration: "7", ...(call.amd || outcome === "voicemail" ? { AnsweredBy: by } : {}) })),
        );
        break;
      }
      default: {
        const final = UNANSWERED[outcome];
        if (!final) return [];
        if (final.rang) out.push(...(await status("ringing", { CallStatus: "ringing" })));
        const sip: Record<string, string> = final.sip ? { SipResponseCode: final.sip } : {};
        out.push(...(await status("completed", { CallStatus: final.status, CallDuration: "0", ...sip })));
        end(final.status);
      }
    }
    return out;
  },
};

/** The seconds a call has been up, from when its answer was fetched (0 when unknown). */
function secondsSinceAnswer(call: SimCall): string {
  const at = call.extra.answeredAtMs as number | undefined;
  return String(at ? Math.max(0, Math.round((Date.now() - at) / 1000)) : 0);
}

function base(call: SimCall, accountSid: string): Record<string, string> {
  return {
    CallSid: call.id,
    AccountSid: accountSid,
    From: call.from,
    To: call.to,
    Direction: (call.extra.direction as string | undefined) ?? "outbound-api",
    ApiVersion: "2010-04-01",
  };
}
