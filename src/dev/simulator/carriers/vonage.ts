// Vonage Voice API v1: RS256 application JWT on every request (verified with the
// application's public key), problem-details errors, answer GET returning an NCCO, HS256-signed events.
import { vonageApplicationApi } from "./vonage-inbound";
import { transferProblems, transferred } from "./vonage-transfer";
import { pem, rsaKeyPair, unb64, verifyRs256, vonageCallbackJwt } from "../sign";
import { DIGITS, json, randomHex, type Account, type Callback, type Carrier, type OutcomeOptions, type SimCall, type SimState } from "../types";

const problem = (status: number, title: string, detail: string, invalid?: Array<{ name: string; reason: string }>) =>
  json(status, { type: `https://developer.nexmo.com/api-errors#${status}`, title, detail, ...(invalid ? { invalid_parameters: invalid } : {}) });

async function authenticate(state: SimState, req: Request): Promise<Account | null> {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "");
  if (!m) return null;
  for (const a of state.accounts.values()) {
    if (a.provider !== "vonage") continue;
    const claims = await verifyRs256(m[1], a.secret.publicKey as CryptoKey);
    if (!claims) continue;
    const now = Date.now() / 1000;
    if (claims.application_id !== a.credentials.application_id) return null;
    if (typeof claims.iat !== "number" || typeof claims.jti !== "string" || !claims.jti || typeof claims.exp !== "number") return null;
    if (claims.exp <= now || claims.iat > now + 60) return null;
    return a;
  }
  return null;
}

async function event(
  account: Account,
  call: SimCall,
  status: string,
  extra: Record<string, string>,
  opts: OutcomeOptions,
  to: { url: string; kind: Callback["kind"] } = { url: call.statusUrl!, kind: "status" },
): Promise<Callback> {
  const body = JSON.stringify({
    uuid: call.id,
    conversation_uuid: call.extra.conversation,
    status,
    direction: call.extra.direction === "inbound" ? "inbound" : "outbound",
    from: call.from,
    to: call.to,
    timestamp: new Date().toISOString(),
    ...extra,
  });
  const now = Math.floor(Date.now() / 1000);
  const iat = now - (opts.stale ? 400 : opts.expired ? 200 : 0);
  // Vonage's callbacks carry no exp; `expired` adds one that ran out two minutes ago, inside the iat window.
  const exp = opts.expired ? { exp: now - 120 } : {};
  const jwt = await vonageCallbackJwt(
    account.credentials.signature_secret,
    {
      iat,
      ...exp,
      jti: crypto.randomUUID(),
      iss: "Vonage",
      api_key: opts.apiKey ?? account.credentials.api_key,
      application_id: account.credentials.application_id,
    },
    body,
  );
  return { kind: to.kind, method: "POST", url: to.url, body, headers: { "Content-Type": "application/json", Authorization: `Bearer ${jwt}` } };
}

/** The NCCO's websocket connect action and what follows it, or null when the document has none. */
function websocketConnect(document: string): { action: any; rest: any[] } | null {
  let ncco: unknown;
  try {
    ncco = JSON.parse(document);
  } catch {
    return null;
  }
  if (!Array.isArray(ncco)) return null;
  const i = ncco.findIndex((a) => a?.action === "connect" && Array.isArray(a.endpoint) && a.endpoint.some((e: any) => e?.type === "websocket"));
  return i < 0 ? null : { action: ncco[i], rest: ncco.slice(i + 1) };
}

export const vonage: Carrier = {
  name: "vonage",

  // Every signed delivery is signed with a fresh JWT (new iat and jti) over the same body; the answer GET is unsigned.
  async redeliver(state, call, cb) {
    if (!cb.headers.Authorization) return cb;
    const account = state.accounts.get(call.accountId)!;
    const claims = JSON.parse(new TextDecoder().decode(unb64(cb.headers.Authorization.replace(/^Bearer\s+/i, "").split(".")[1])));
    delete claims.payload_hash;
    const jwt = await vonageCallbackJwt(
      account.credentials.signature_secret,
      { ...claims, iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID() },
      cb.body,
    );
    return { ...cb, headers: { ...cb.headers, Authorization: `Bearer ${jwt}` } };
  },
  outcomes: ["answered", "busy", "no_answer", "voicemail", "failed", "declined", "canceled"],

  async createAccount(id) {
    const { pair, pkcs8 } = await rsaKeyPair();
    return {
      id,
      provider: "vonage",
      credentials: {
        api_key: randomHex(4),
        api_secret: randomHex(8),
        application_id: crypto.randomUUID(),
        private_key: pem("PRIVATE KEY", pkcs8),
        // The same key as PKCS#1 (what older Vonage dashboards hand out): PKCS#8's inner OCTET STRING.
        private_key_pkcs1: pem("RSA PRIVATE KEY", pkcs1Of(pkcs8)),
        signature_secret: randomHex(16),
      },
      secret: { publicKey: pair.publicKey },
      applications: [],
    };
  },

  async handle(state, req, path, body) {
    const application = vonageApplicationApi(state, req, path, body);
    if (application) return application;
    const keys = /^\/v1\/calls\/([^/]+)\/dtmf$/.exec(path);
    const m = keys ?? /^\/v1\/calls(?:\/([^/]+))?$/.exec(path);
    if (!m) return null;
    const account = await authenticate(state, req);
    if (!account) return problem(401, "Unauthorized", "Invalid Token");
    state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });
    let p: any;
    try {
      p = body ? JSON.parse(body) : {};
    } catch {
      return problem(400, "Bad Request", "The request body is not valid JSON");
    }
    if (keys) {
      const call = state.calls.get(keys[1]);
      if (req.method !== "PUT") return problem(405, "Method Not Allowed", "Use PUT to play DTMF");
      if (!call || call.accountId !== account.id) return problem(404, "Not Found", "Call not found");
      if (call.state !== "answered") return problem(400, "Bad Request", "The call is not in progress");
      if (typeof p.digits !== "string" || !/^[0-9*#p]+$/.test(p.digits))
        return problem(400, "Bad Request", "Invalid digits", [{ name: "digits", reason: "must match ^[0-9*#p]+$" }]);
      return json(200, { message: "DTMF sent", uuid: call.id });
    }
    if (m[1]) {
      if (req.method !== "PUT") return problem(405, "Method Not Allowed", "Use PUT to modify a call");
      const call = state.calls.get(m[1]);
      if (!call || call.accountId !== account.id) return problem(404, "Not Found", "Call not found");
      if (p.action === "transfer" && call.state === "answered") {
        const invalid = transferProblems(p);
        if (invalid.length) return problem(400, "Bad Request", "The request failed due to validation errors", invalid);
        transferred(call, p);
        return new Response(null, { status: 204 });
      }
      if (p.action !== "hangup")
        return problem(400, "Bad Request", "Unsupported action", [{ name: "action", reason: "must be hangup or transfer (of a call in progress)" }]);
      if (call.state === "ended") return problem(400, "Bad Request", "The call has already ended");
      const answered = call.state === "answered";
      call.state = "ended";
      // Hung up through the API: no `disconnected` event for its websocket leg (Vonage's fallback guide).
      call.extra.apiHangup = true;
      call.pending.push(await event(account, call, answered ? "completed" : "cancelled", answered ? { duration: "3" } : {}, {}));
      return new Response(null, { status: 204 });
    }
    if (req.method === "GET") {
      // The call list (read-only): what a credentials check asks for.
      const mine = [...state.calls.values()].filter((c) => c.accountId === account.id);
      const size = Math.max(1, Math.min(100, Number(new URL(req.url).searchParams.get("page_size") ?? 10) || 10));
      return json(200, {
        count: mine.length,
        page_size: size,
        _embedded: { calls: mine.slice(0, size).map((c) => ({ uuid: c.id, status: c.state, direction: "outbound" })) },
      });
    }
    if (req.method !== "POST") return problem(405, "Method Not Allowed", "Use POST to create a call");
    const fault = state.takeFault(account.id, "originate");
    if (fault) return problem(fault.status, "Internal Error", String(fault.body ?? "An internal error occurred"));
    const invalid: Array<{ name: string; reason: string }> = [];
    const to = Array.isArray(p.to) ? p.to[0] : undefined;
    if (to?.type !== "phone" || !DIGITS.test(String(to.number ?? ""))) invalid.push({ name: "to", reason: "must be [{type:'phone', number: digits}]" });
    if (p.from?.type !== "phone" || !DIGITS.test(String(p.from.number ?? ""))) invalid.push({ name: "from", reason: "must be {type:'phone', number: digits}" });
    if (!(Array.isArray(p.answer_url) && typeof p.answer_url[0] === "string") && !Array.isArray(p.ncco))
      invalid.push({ name: "answer_url", reason: "answer_url (array) or ncco is required" });
    if (p.event_url !== undefined && !(Array.isArray(p.event_url) && typeof p.event_url[0] === "string"))
      invalid.push({ name: "event_url", reason: "must be an array of one URL" });
    if (p.answer_method !== undefined && !["GET", "POST"].includes(p.answer_method)) invalid.push({ name: "answer_method", reason: "must be GET or POST" });
    if (invalid.length) return problem(400, "Bad Request", "The request failed due to validation errors", invalid);
    const uuid = crypto.randomUUID();
    const call: SimCall = {
      id: uuid,
      provider: "vonage",
      accountId: account.id,
      to: String(to.number),
      from: String(p.from.number),
      answerUrl: p.answer_url?.[0],
      statusUrl: p.event_url?.[0],
      urls: { answer_method: p.answer_method ?? "GET" },
      amd: p.machine_detection !== undefined,
      state: "queued",
      pending: [],
      extra: { conversation: `CON-${crypto.randomUUID()}` },
      createdAt: Date.now(),
    };
    state.calls.set(uuid, call);
    return json(201, { uuid, status: "started", direction: "outbound", conversation_uuid: call.extra.conversation });
  },

  // A websocket the application closed (or that dropped) with the call up: a connect action with
  // `eventType: synchronous` posts the leg's `disconnected` event to its eventUrl, whose answer is the next NCCO;
  // without one the NCCO goes on after the connect action, and a finished NCCO completes the call.
  async mediaEnded(state, call, document) {
    if (call.extra.apiHangup) return [];
    const account = state.accounts.get(call.accountId)!;
    const connect = websocketConnect(document);
    const url = connect?.action.eventType === "synchronous" && Array.isArray(connect.action.eventUrl) ? connect.action.eventUrl[0] : null;
    if (typeof url === "string") {
      const uri = connect!.action.endpoint.find((e: any) => e?.type === "websocket").uri;
      const leg = { uuid: crypto.randomUUID(), to: String(uri), from: call.from, direction: "outbound" };
      return [await event(account, { ...call, id: leg.uuid }, "disconnected", { to: leg.to }, {}, { url, kind: "answer" })];
    }
    if (connect?.rest.length) return [];
    call.state = "ended";
    return call.statusUrl ? [await event(account, call, "completed", { duration: "7" }, {})] : [];
  },

  async script(state, call, outcome, opts) {
    const account = state.accounts.get(call.accountId)!;
    const out: Callback[] = [await event(account, call, "started", {}, opts)];
    const answer = () => {
      call.state = "answered";
      const q = new URLSearchParams({ to: call.to, from: call.from, uuid: call.id, conversation_uuid: String(call.extra.conversation) });
      out.push(
        call.urls.answer_method === "POST"
          ? {
              kind: "answer",
              method: "POST",
              url: call.answerUrl!,
              body: JSON.stringify(Object.fromEntries(q)),
              headers: { "Content-Type": "application/json" },
            }
          : { kind: "answer", method: "GET", url: `${call.answerUrl}${call.answerUrl!.includes("?") ? "&" : "?"}${q}`, body: "", headers: {} },
      );
    };
    const end = async (status: string, extra: Record<string, string> = {}) => {
      call.state = "ended";
      out.push(await event(account, call, status, extra, opts));
    };
    switch (outcome) {
      case "answered":
      case "voicemail":
        out.push(await event(account, call, "ringing", {}, opts));
        answer();
        out.push(await event(account, call, "answered", {}, opts));
        if (outcome === "voicemail") await end("machine");
        await end("completed", {
          duration: "7",
          start_time: new Date(Date.now() - 7000).toISOString(),
          end_time: new Date().toISOString(),
          rate: "0.01",
          price: "0.002",
          network: "310260",
        });
        break;
      case "busy":
        out.push(await event(account, call, "ringing", {}, opts));
        await end("busy");
        break;
      case "no_answer":
        out.push(await event(account, call, "ringing", {}, opts));
        await end("timeout");
        break;
      case "declined":
        out.push(await event(account, call, "ringing", {}, opts));
        await end("rejected", { detail: "remote_reject" });
        break;
      case "failed":
        await end("failed", { detail: "invalid_number" });
        break;
      case "canceled":
        out.push(await event(account, call, "ringing", {}, opts));
        await end("cancelled");
        break;
      default:
        return [];
    }
    return out;
  },
};

/** PKCS#8 PrivateKeyInfo -> its inner PKCS#1 RSAPrivateKey (the OCTET STRING after version and algorithm). */
function pkcs1Of(pkcs8: Uint8Array): Uint8Array {
  let i = 0;
  const len = () => {
    let n = pkcs8[i++];
    if (n & 0x80) {
      const k = n & 0x7f;
      n = 0;
      for (let j = 0; j < k; j++) n = n * 256 + pkcs8[i++];
    }
    return n;
  };
  i++; // SEQUENCE
  len();
  i++; // INTEGER version
  i += len();
  i++; // SEQUENCE algorithm
  i += len();
  i++; // OCTET STRING
  const n = len();
  return pkcs8.slice(i, i + n);
}
