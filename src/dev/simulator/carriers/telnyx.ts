// Telnyx Call Control v2: Bearer JSON, `{errors:[…]}` error bodies, commands under
// /v2/calls/{id}/actions/*, webhooks signed with Ed25519 over `timestamp|body`.
import { b64, telnyxSign } from "../sign";
import { TRANSFER_COMMANDS, transferCommand } from "./telnyx-transfer";
import { telnyxApplication, telnyxInboundCommand } from "./telnyx-inbound";
import { E164, json, randomHex, type Account, type Callback, type Carrier, type Outcome, type OutcomeOptions, type SimCall, type SimState } from "../types";

const err = (status: number, code: string, title: string, detail: string, pointer?: string) =>
  json(status, { errors: [{ code, title, detail, ...(pointer ? { source: { pointer } } : {}) }] });

function bearer(state: SimState, req: Request): Account | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.get("authorization") ?? "");
  return m ? [...state.accounts.values()].find((a) => a.provider === "telnyx" && a.credentials.api_key === m[1]) : undefined;
}

export async function webhook(
  account: Account,
  call: SimCall,
  eventType: string,
  payload: Record<string, unknown>,
  opts: OutcomeOptions,
  kind: Callback["kind"] = "status",
): Promise<Callback> {
  const body = JSON.stringify({
    data: {
      record_type: "event",
      event_type: eventType,
      id: crypto.randomUUID(),
      occurred_at: new Date().toISOString(),
      payload: {
        call_control_id: call.id,
        call_leg_id: call.extra.legId,
        call_session_id: call.extra.sessionId,
        connection_id: call.extra.connectionId,
        client_state: call.extra.clientState ?? null,
        from: call.from,
        to: call.to,
        direction: call.extra.direction === "inbound" ? "incoming" : "outgoing",
        ...payload,
      },
    },
    meta: { attempt: 1, delivered_to: call.statusUrl },
  });
  const ts = String(Math.floor(Date.now() / 1000) - (opts.stale ? 400 : 0));
  return {
    kind,
    method: "POST",
    url: call.statusUrl!,
    body,
    headers: {
      "Content-Type": "application/json",
      "telnyx-timestamp": ts,
      "telnyx-signature-ed25519": await telnyxSign(account.secret.privateKey as CryptoKey, ts, body),
    },
  };
}

/** The calls nobody answered: Telnyx's hangup_cause and SIP cause on call.hangup. */
const UNANSWERED: Partial<Record<Outcome, { hangup: string; sip: string }>> = {
  busy: { hangup: "user_busy", sip: "486" },
  no_answer: { hangup: "timeout", sip: "480" },
  declined: { hangup: "call_rejected", sip: "603" },
  failed: { hangup: "not_found", sip: "404" },
  canceled: { hangup: "originator_cancel", sip: "487" },
};

export const telnyx: Carrier = {
  name: "telnyx",

  // Telnyx's retry is another delivery: meta.attempt goes up, with a new timestamp and signature.
  async redeliver(state, call, cb) {
    const account = state.accounts.get(call.accountId)!;
    const parsed = JSON.parse(cb.body);
    const body = JSON.stringify({ ...parsed, meta: { ...parsed.meta, attempt: Number(parsed.meta?.attempt ?? 1) + 1 } });
    const ts = String(Math.floor(Date.now() / 1000));
    return {
      ...cb,
      body,
      headers: { ...cb.headers, "telnyx-timestamp": ts, "telnyx-signature-ed25519": await telnyxSign(account.secret.privateKey as CryptoKey, ts, body) },
    };
  },
  outcomes: ["answered", "busy", "no_answer", "voicemail", "failed", "declined", "canceled"],

  async createAccount(id) {
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const pub = b64((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
    return {
      id,
      provider: "telnyx",
      credentials: { api_key: `KEY${randomHex(16).toUpperCase()}`, webhook_public_key: pub },
      secret: { privateKey: pair.privateKey },
      applications: [],
    };
  },

  async handle(state, req, path, body) {
    if (!path.startsWith("/v2/")) return null;
    const account = bearer(state, req);
    if (!account) return err(401, "10009", "Authentication failed", "The API key in the Authorization header is missing or invalid.");
    if (path === "/v2/balance" && req.method === "GET") return json(200, { data: { record_type: "balance", balance: "10.00", currency: "USD" } });
    state.record(account.id, {
      method: req.method,
      path,
      query: Object.fromEntries([...new URL(req.url).searchParams].map(([k, v]) => [k, [v]])),
      headers: Object.fromEntries(req.headers),
      body,
      at: Date.now(),
    });
    let p: Record<string, any> = {};
    if (req.method === "POST" || req.method === "PATCH") {
      try {
        p = body ? JSON.parse(body) : {};
      } catch {
        return err(400, "10015", "Invalid JSON", "The request body is not valid JSON.");
      }
    }

    if (path === "/v2/call_control_applications") {
      if (req.method === "GET") {
        const name = new URL(req.url).searchParams.get("filter[application_name][contains]") ?? "";
        return json(200, {
          data: account.applications
            .filter((a) => a.name.includes(name))
            .map((a) => ({ id: a.id, application_name: a.name, webhook_event_url: a.url, record_type: "call_control_application" })),
          meta: { total_results: account.applications.length },
        });
      }
      const fault = state.takeFault(account.id, "provision");
      if (fault) return err(fault.status, "10007", "Unexpected error", String(fault.body ?? "An unexpected error occurred."));
      if (typeof p.application_name !== "string" || !p.application_name)
        return err(422, "10015", "Invalid value", "application_name is required", "/application_name");
      if (typeof p.webhook_event_url !== "string" || !/^https?:\/\//.test(p.webhook_event_url))
        return err(422, "10015", "Invalid value", "webhook_event_url must be a URL", "/webhook_event_url");
      const app = { id: String(1_000_000_000_000 + Math.floor(Math.random() * 1e12)), name: p.application_name, url: p.webhook_event_url };
      account.applications.push(app);
      return json(201, { data: { id: app.id, application_name: app.name, webhook_event_url: app.url, active: true, record_type: "call_control_application" } });
    }

    const app = telnyxApplication(account, req.method, path, p, err);
    if (app) return app;

    const action = /^\/v2\/calls\/([^/]+)\/actions\/([a-z_]+)$/.exec(path);
    if (action && req.method === "POST") {
      // Telnyx's SDK sends the id with its colon as is (`v3:…`); an id it would never send is not found.
      if (/%3A/i.test(action[1])) return err(404, "10005", "Resource not found", "Call not found");
      const call = state.calls.get(decodeURIComponent(action[1]));
      if (!call || call.accountId !== account.id) return err(404, "10005", "Resource not found", "Call not found");
      if (call.state === "ended") return err(422, "90018", "Call has already ended", "This call is no longer active and can't receive commands.");
      if (p.client_state !== undefined && (typeof p.client_state !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(p.client_state)))
        return err(422, "10015", "Invalid value", "client_state must be a valid Base-64 encoded string", "/client_state");
      // Telnyx ignores a command whose command_id this call has already seen.
      call.extra.commandIds ??= [];
      const seen = call.extra.commandIds as string[];
      if (typeof p.command_id === "string") {
        if (seen.includes(p.command_id)) return json(200, { data: { result: "ok" } });
        seen.push(p.command_id);
      }
      // client_state set by a command is carried by every later webhook.
      if (typeof p.client_state === "string") call.extra.clientState = p.client_state;
      const commandFault = state.takeFault(account.id, action[2]);
      if (commandFault) return err(commandFault.status, "10015", "Command refused", String(commandFault.body ?? "refused"));
      if (action[2] === "hangup") {
        const answered = call.state === "answered";
        call.state = "ended";
        call.extra.apiHangup = true;
        // A scripted answer is a 7 s call on the carrier's clock however long the application took to hang it up (a
        // busy test machine made it 8); an inbound call's times are real.
        const times = answered ? { start_time: call.extra.answeredAt, end_time: call.extra.scriptedEnd ?? new Date().toISOString() } : {};
        call.pending.push(
          await webhook(
            account,
            call,
            "call.hangup",
            {
              hangup_cause: answered ? "normal_clearing" : "originator_cancel",
              hangup_source: "caller",
              sip_hangup_cause: answered ? "200" : "487",
              state: "hangup",
              ...times,
            },
            {},
          ),
        );
      } else if (action[2] === "speak") {
        if (typeof p.payload !== "string" || !p.payload || typeof p.voice !== "string")
          return err(422, "10015", "Invalid value", "payload and voice are required", "/payload");
        if ([...p.payload].length > 3000) return err(422, "10015", "Invalid value", "payload must be at most 3000 characters", "/payload");
        // Gendered voices belong to service_level basic; the default level (premium) takes <Provider>.<Model>.<VoiceId>.
        const level = p.service_level ?? "premium";
        if (level === "basic" && !["male", "female"].includes(p.voice))
          return err(422, "10015", "Invalid value", "service_level basic takes voice male or female", "/voice");
        if (level === "basic" && p.language !== undefined && p.language !== "en-US")
          return err(422, "10015", "Invalid value", "service_level basic speaks en-US only", "/language");
        if (level !== "basic" && !/^[A-Za-z]+\.[^.\s]+/.test(p.voice))
          return err(
            422,
            "10015",
            "Invalid value",
            `voice ${p.voice} is not a ${level} voice (e.g. AWS.Polly.Joanna-Neural); gendered voices need service_level basic`,
            "/voice",
          );
        call.pending.push(await webhook(account, call, "call.speak.ended", { status: "completed" }, {}));
      } else if (action[2] === "streaming_start") {
        if (typeof p.stream_url !== "string" || !/^wss?:\/\//.test(p.stream_url))
          return err(422, "10015", "Invalid value", "stream_url must be a WebSocket URL", "/stream_url");
        // The new stream replaces the call's; Telnyx connects to it and says so.
        call.streamUrl = p.stream_url;
        call.pending.push(await webhook(account, call, "streaming.started", { stream_url: p.stream_url }, {}));
      } else if (action[2] === "send_dtmf") {
        if (typeof p.digits !== "string" || !/^[0-9A-D*#wW]+$/.test(p.digits))
          return err(422, "10015", "Invalid value", "digits must be 0-9, A-D, *, # with w and W as pauses", "/digits");
        if (p.duration_millis !== undefined && !(Number.isInteger(p.duration_millis) && p.duration_millis >= 100 && p.duration_millis <= 500))
          return err(422, "10015", "Invalid value", "duration_millis must be between 100 and 500", "/duration_millis");
        if (call.state !== "answered") return err(422, "90018", "Call is not answered", "DTMF can only be sent on an answered call.");
      } else if (TRANSFER_COMMANDS.includes(action[2])) {
        return transferCommand(state, account, call, action[2], p, (a, c, type, payload) => webhook(a, c, type, payload, {}), err);
      } else if (action[2] === "answer" || action[2] === "reject") {
        const done = await telnyxInboundCommand(account, call, action[2], p, err, (a, c, type, payload) => webhook(a, c, type, payload, {}));
        if (done) return done;
      } else {
        return err(422, "10015", "Invalid command", `Unknown command ${action[2]}`);
      }
      return json(200, { data: { result: "ok" } });
    }

    if (path === "/v2/calls" && req.method === "POST") {
      const fault = state.takeFault(account.id, "originate");
      if (fault) return err(fault.status, "10007", "Unexpected error", String(fault.body ?? "An unexpected error occurred."));
      if (!p.connection_id || !account.applications.some((a) => a.id === String(p.connection_id)))
        return err(422, "10015", "Invalid value", "The connection_id is not a Call Control application of this account.", "/connection_id");
      if (typeof p.to !== "string" || !(E164.test(p.to) || /^sip:/.test(p.to)))
        return err(422, "10016", "Invalid 'to' address", `The destination ${p.to} is not a valid E.164 number or SIP URI.`, "/to");
      if (typeof p.from !== "string" || !E164.test(p.from))
        return err(422, "10016", "Invalid 'from' address", `The caller ID ${p.from} is not a valid E.164 number.`, "/from");
      if (p.timeout_secs !== undefined && !(Number.isInteger(p.timeout_secs) && p.timeout_secs >= 5 && p.timeout_secs <= 600))
        return err(422, "10015", "Invalid value", "timeout_secs must be between 5 and 600", "/timeout_secs");
      if (p.webhook_url !== undefined && !/^https?:\/\//.test(String(p.webhook_url)))
        return err(422, "10015", "Invalid value", "webhook_url must be a URL", "/webhook_url");
      const id = `v3:${randomHex(20)}`;
      const call: SimCall = {
        id,
        provider: "telnyx",
        accountId: account.id,
        to: p.to,
        from: p.from,
        statusUrl: p.webhook_url ?? account.applications.find((a) => a.id === String(p.connection_id))?.url,
        // Streaming on dial starts when the call is answered.
        ...(typeof p.stream_url === "string" ? { streamUrl: p.stream_url } : {}),
        urls: {},
        amd: p.answering_machine_detection !== undefined,
        state: "queued",
        pending: [],
        extra: { legId: crypto.randomUUID(), sessionId: crypto.randomUUID(), connectionId: String(p.connection_id), clientState: p.client_state ?? null },
        createdAt: Date.now(),
      };
      state.calls.set(id, call);
      return json(200, {
        data: { call_control_id: id, call_leg_id: call.extra.legId, call_session_id: call.extra.sessionId, is_alive: false, record_type: "call" },
      });
    }
    return err(404, "10005", "Resource not found", `No route for ${req.method} ${path}`);
  },

  // A key the callee pressed: call.dtmf.received (the call's media stream carries its own dtmf event too).
  async pressed(state, call, digit) {
    return [await webhook(state.accounts.get(call.accountId)!, call, "call.dtmf.received", { digit }, {})];
  },

  // The stream's socket closed with the call up: Telnyx reports streaming.stopped and the call goes on, streamless,
  // until a streaming_start (or a hangup) command.
  async mediaEnded(state, call) {
    if (call.extra.apiHangup || call.state === "ended") return [];
    const account = state.accounts.get(call.accountId)!;
    return [await webhook(account, call, "streaming.stopped", { stream_url: call.streamUrl ?? null }, {})];
  },

  async script(state, call, outcome, opts) {
    const account = state.accounts.get(call.accountId)!;
    const out: Callback[] = [await webhook(account, call, "call.initiated", { state: "bridging" }, opts)];
    // A 7 s call, ending now: its end time is fixed here, not read after the webhooks before it were signed and sent
    // (on a busy machine that took long enough to make it an 8 s call).
    const now = Date.now();
    const started = new Date(now - 7000).toISOString();
    const ended = new Date(now).toISOString();
    const hangup = async (cause: string, sip: string, answered: boolean) => {
      call.state = "ended";
      out.push(
        await webhook(
          account,
          call,
          "call.hangup",
          {
            hangup_cause: cause,
            hangup_source: answered ? "callee" : "unknown",
            sip_hangup_cause: sip,
            state: "hangup",
            start_time: started,
            end_time: ended,
          },
          opts,
        ),
      );
    };
    switch (outcome) {
      case "answered":
      case "voicemail":
        // The call stays up: the application speaks and hangs up by command (call.hangup follows the hangup command).
        call.state = "answered";
        call.extra.answeredAt = started;
        call.extra.scriptedEnd = ended;
        out.push(await webhook(account, call, "call.answered", { state: "answered", start_time: started }, opts));
        if (outcome === "voicemail") out.push(await webhook(account, call, "call.machine.detection.ended", { result: "machine" }, opts));
        break;
      default: {
        const cause = UNANSWERED[outcome];
        if (!cause) return [];
        await hangup(cause.hangup, cause.sip, false);
      }
    }
    return out;
  },
};
