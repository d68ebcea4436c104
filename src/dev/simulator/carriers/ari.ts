// Asterisk ARI: originate with query parameters (Basic auth or api_key), 200 Channel,
// GET a live channel, DELETE → 204 then 404, and the events WebSocket per application (the newer socket replaces the older).
import { basicCredentials } from "../sign";
import { inboundCall, json, randomHex, type Account, type Carrier, type SimCall } from "../types";
import { playOnChannel } from "./ari-play";

const err = (status: number, message: string) => json(status, { message });

/** The sockets of one simulated PBX application; the simulator object owns them (cross-request I/O). */
export interface AriSockets {
  accept(account: Account): Response;
  send(accountId: string, events: unknown[]): number;
  drop(accountId: string, code: number, reason: string): number;
}

function authenticated(req: Request, url: URL, account: Account): boolean {
  const basic = basicCredentials(req.headers.get("authorization"));
  const apiKey = url.searchParams.get("api_key");
  const [user, password] = basic
    ? [basic.user, basic.password]
    : apiKey
      ? [apiKey.slice(0, apiKey.indexOf(":")), apiKey.slice(apiKey.indexOf(":") + 1)]
      : ["", ""];
  return user === account.credentials.app_name && password === account.credentials.app_password;
}

const ts = () => new Date().toISOString();

export function channelOf(call: SimCall, state: string) {
  return {
    id: call.id,
    name: `${String(call.extra.endpoint).split("@")[0]}-${String(call.extra.seq).padStart(8, "0")}`,
    state,
    caller: { name: "", number: call.from },
    connected: { name: "", number: "" },
    accountcode: "",
    dialplan: { context: "default", exten: String(call.extra.exten ?? "s"), priority: 1, app_name: "", app_data: "" },
    creationtime: new Date(call.createdAt).toISOString(),
    language: "en",
  };
}

export function destroyed(call: SimCall, cause: number, causeTxt: string) {
  return {
    type: "ChannelDestroyed",
    timestamp: ts(),
    application: call.extra.app,
    cause,
    cause_txt: causeTxt,
    channel: channelOf(call, call.state === "answered" ? "Up" : "Ringing"),
  };
}

let seq = 0;

export function ari(sockets: AriSockets): Carrier {
  return {
    name: "ari",
    outcomes: ["answered", "busy", "no_answer", "declined", "failed"],

    async createAccount(id) {
      return { id, provider: "ari", credentials: { app_name: `app-${randomHex(4)}`, app_password: randomHex(12) }, secret: {}, applications: [] };
    },

    async handle(state, req, path, body) {
      const info = /^\/([^/]+)\/ari\/asterisk\/info$/.exec(path);
      if (info) {
        // System information (a read-only credentials check).
        const account = state.accounts.get(info[1]);
        if (account?.provider !== "ari") return err(404, "Not found");
        if (!authenticated(req, new URL(req.url), account)) return err(401, "Authentication required");
        if (req.method !== "GET") return err(405, "Method not allowed");
        const fault = state.takeFault(account.id, "info");
        if (fault) return err(fault.status, String(fault.body ?? "Service unavailable"));
        return json(200, { system: { version: "20.0.0", entity_id: "sim" }, status: { startup_time: new Date(0).toISOString() } });
      }
      const media = /^\/([^/]+)\/ari\/(bridges(?:\/[^/]+(?:\/addChannel)?)?|channels\/externalMedia)$/.exec(path);
      if (media) return externalMedia(state, req, path, body, media[1], media[2]);
      const m = /^\/([^/]+)\/ari\/(channels|events)(?:\/([^/]+))?(\/play|\/dtmf|\/answer)?$/.exec(path);
      if (!m) return null;
      const account = state.accounts.get(m[1]);
      if (account?.provider !== "ari") return err(404, "Not found");
      const url = new URL(req.url);
      if (!authenticated(req, url, account)) return err(401, "Authentication required");
      state.record(account.id, {
        method: req.method,
        path,
        query: Object.fromEntries([...url.searchParams].map(([k]) => [k, url.searchParams.getAll(k)])),
        headers: Object.fromEntries(req.headers),
        body,
        at: Date.now(),
      });

      if (m[2] === "events") {
        if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") return err(400, "WebSocket upgrade required");
        const fault = state.takeFault(account.id, "events");
        if (fault) return err(fault.status, String(fault.body ?? "Service unavailable"));
        if (url.searchParams.get("app") !== account.credentials.app_name) return err(400, "Invalid application");
        return sockets.accept(account);
      }

      if (m[3]) {
        const play = m[4] === "/play";
        if (m[4] === "/dtmf") return sendDtmf(state, account.id, decodeURIComponent(m[3]), req, url.searchParams);
        if (m[4] === "/answer") return answerChannel(state, account.id, decodeURIComponent(m[3]), req, sockets);
        if (play ? req.method !== "POST" : req.method !== "DELETE" && req.method !== "GET") return err(405, "Method not allowed");
        const channelId = decodeURIComponent(m[3]);
        const call = state.calls.get(channelId);
        // A channel hung up leaves its bridge (the external media channel is known to its bridge only).
        const bridged = req.method === "DELETE" && leaveBridges(account.id, channelId);
        if (!call || call.accountId !== account.id || call.state === "ended")
          return bridged ? new Response(null, { status: 204 }) : err(404, "Channel not found");
        if (play) return playOnChannel(account, call, url.searchParams, (events) => sockets.send(account.id, events));
        if (req.method === "GET") return json(200, channelOf(call, call.state === "answered" ? "Up" : "Ringing"));
        const answered = call.state === "answered";
        const reason = url.searchParams.get("reason") ?? "normal";
        if (!HANGUP_REASONS[reason]) return err(400, `Invalid reason for hangup provided`);
        const [cause, causeTxt] = HANGUP_REASONS[reason];
        call.state = "ended";
        sockets.send(account.id, [
          {
            type: "ChannelHangupRequest",
            timestamp: ts(),
            application: call.extra.app,
            cause,
            soft: false,
            channel: channelOf(call, answered ? "Up" : "Ringing"),
          },
          ...(answered ? [{ type: "StasisEnd", timestamp: ts(), application: call.extra.app, channel: channelOf(call, "Up") }] : []),
          destroyed(call, cause, causeTxt),
        ]);
        return new Response(null, { status: 204 });
      }

      if (req.method !== "POST") return err(405, "Method not allowed");
      const fault = state.takeFault(account.id, "originate");
      if (fault) return err(fault.status, String(fault.body ?? "Allocation failed"));
      const q = url.searchParams;
      const endpoint = q.get("endpoint");
      if (!endpoint) return err(400, "Endpoint parameter not specified");
      if (!/^[A-Za-z][A-Za-z0-9]*\/\S+$/.test(endpoint)) return err(400, `Invalid endpoint ${endpoint}`);
      const app = q.get("app");
      if (!app && !q.get("extension")) return err(400, "Either app or extension must be specified");
      const timeout = q.get("timeout");
      if (timeout !== null && !/^-?\d+$/.test(timeout)) return err(400, "timeout must be an integer");
      const channelId = q.get("channelId") ?? `${Date.now()}.${seq}`;
      if (state.calls.has(channelId)) return err(409, "Channel with given unique ID already exists");
      const call: SimCall = {
        id: channelId,
        provider: "ari",
        accountId: account.id,
        to: endpoint,
        from: q.get("callerId") ?? "",
        urls: {},
        amd: false,
        state: "queued",
        pending: [],
        extra: { endpoint, app, args: (q.get("appArgs") ?? "").split(",").filter(Boolean), seq: ++seq, timeout },
        createdAt: Date.now(),
      };
      state.calls.set(channelId, call);
      return json(200, channelOf(call, "Down"));
    },

    // A key the callee pressed: ChannelDtmfReceived on the application's events socket (the run's channel is in Stasis).
    async pressed(_state, call, digit) {
      sockets.send(call.accountId, [
        { type: "ChannelDtmfReceived", timestamp: ts(), application: call.extra.app, digit, duration_ms: 100, channel: channelOf(call, "Up") },
      ]);
      return [];
    },

    async script(_state, call, outcome) {
      const app = call.extra.app;
      const change = (s: string) => ({ type: "ChannelStateChange", timestamp: ts(), application: app, channel: channelOf(call, s) });
      const events: unknown[] = [];
      switch (outcome) {
        case "answered":
          events.push(change("Ringing"));
          call.state = "answered";
          events.push(change("Up"), { type: "StasisStart", timestamp: ts(), application: app, args: call.extra.args, channel: channelOf(call, "Up") });
          events.push({ type: "StasisEnd", timestamp: ts(), application: app, channel: channelOf(call, "Up") }, destroyed(call, 16, "Normal Clearing"));
          break;
        case "busy":
          events.push(destroyed(call, 17, "User busy"));
          break;
        case "no_answer":
          events.push(change("Ringing"), destroyed(call, 19, "No answer"));
          break;
        case "declined":
          events.push(destroyed(call, 21, "Call Rejected"));
          break;
        case "failed":
          events.push(destroyed(call, 1, "Unallocated (unassigned) number"));
          break;
        default:
          return [];
      }
      call.state = "ended";
      sockets.send(call.accountId, events);
      return [];
    },
  };
}

/** ARI's hang-up `reason` values → the Q.850 cause Asterisk reports for them. */
const HANGUP_REASONS: Record<string, [number, string]> = {
  normal: [16, "Normal Clearing"],
  busy: [17, "User busy"],
  congestion: [34, "Circuit/channel congestion"],
  no_answer: [19, "No answer"],
  rejected: [21, "Call Rejected"],
  unallocated: [1, "Unallocated (unassigned) number"],
  normal_unspecified: [31, "Normal, unspecified"],
  failure: [38, "Network out of order"],
};

/** POST /channels/{id}/answer: 204, the channel Up (a ChannelStateChange); 409 when it is not ringing in our app. */
function answerChannel(state: Parameters<Carrier["handle"]>[0], accountId: string, channelId: string, req: Request, sockets: AriSockets): Response {
  if (req.method !== "POST") return err(405, "Method not allowed");
  const call = state.calls.get(channelId);
  if (!call || call.accountId !== accountId || call.state === "ended") return err(404, "Channel not found");
  if (call.state !== "answered") {
    call.state = "answered";
    sockets.send(accountId, [{ type: "ChannelStateChange", timestamp: ts(), application: call.extra.app, channel: channelOf(call, "Up") }]);
  }
  return new Response(null, { status: 204 });
}

/**
 * A caller dials `to` on the PBX, whose dialplan sends the channel into the account's application (`Stasis(app)`,
 * or `Stasis(app,<to>)` with `asArgument`): the channel registered ringing (Asterisk's own id), and its StasisStart
 * (state Ring, `dialplan.exten` the number dialed, `caller.number` the caller) on the events socket.
 */
export function placeAriInbound(
  state: { calls: Map<string, SimCall> },
  account: Account,
  sockets: AriSockets,
  o: { to: string; from: string; asArgument?: boolean },
) {
  const id = `${Math.floor(Date.now() / 1000)}.${++seq}`;
  const app = account.credentials.app_name;
  const call = inboundCall(state, {
    id,
    provider: "ari",
    accountId: account.id,
    to: o.to,
    from: o.from,
    state: "ringing",
    extra: { endpoint: "PJSIP/caller", app, args: o.asArgument ? [o.to] : [], seq, exten: o.to },
  });
  const sent = sockets.send(account.id, [{ type: "StasisStart", timestamp: ts(), application: app, args: call.extra.args, channel: channelOf(call, "Ring") }]);
  return { channel_id: id, delivered: sent };
}

/** Mixing bridges by id: the calls they hold, and the account that made them. */
/** POST /channels/{id}/dtmf: 204 on a live channel; `dtmf` is required (0-9, *, #, A-D and w/W/f as Asterisk plays them). */
function sendDtmf(state: Parameters<Carrier["handle"]>[0], accountId: string, channelId: string, req: Request, q: URLSearchParams): Response {
  if (req.method !== "POST") return err(405, "Method not allowed");
  const call = state.calls.get(channelId);
  if (!call || call.accountId !== accountId || call.state === "ended") return err(404, "Channel not found");
  if (call.state !== "answered") return err(409, "Channel not in Stasis application");
  if (!/^[0-9*#A-DwWf]+$/i.test(q.get("dtmf") ?? "")) return err(400, "dtmf: DTMF digits to send are required");
  return new Response(null, { status: 204 });
}

const bridges = new Map<string, { accountId: string; channels: string[] }>();

/** Takes a channel out of every bridge of the account; true when it was in one. */
function leaveBridges(accountId: string, channelId: string): boolean {
  let was = false;
  for (const b of bridges.values()) {
    if (b.accountId !== accountId || !b.channels.includes(channelId)) continue;
    b.channels = b.channels.filter((c) => c !== channelId);
    was = true;
  }
  return was;
}

/**
 * What a voice agent's call needs of ARI: a mixing bridge (create, add a channel, delete) and an external media
 * channel on the WebSocket driver (`transport=websocket`, `encapsulation=none`), answered as Asterisk 22 answers it:
 * in server mode with the connection id to open `/media/{id}` with, in client mode after dialling the named
 * websocket_client.conf connection.
 */
async function externalMedia(state: Parameters<Carrier["handle"]>[0], req: Request, path: string, body: string, accountId: string, what: string) {
  const account = state.accounts.get(accountId);
  if (account?.provider !== "ari") return err(404, "Not found");
  const url = new URL(req.url);
  if (!authenticated(req, url, account)) return err(401, "Authentication required");
  const q = url.searchParams;
  state.record(account.id, {
    method: req.method,
    path,
    query: Object.fromEntries([...q].map(([k]) => [k, q.getAll(k)])),
    headers: Object.fromEntries(req.headers),
    body,
    at: Date.now(),
  });
  const [, bridgeId, add] = /^bridges(?:\/([^/]+)(?:\/(addChannel))?)?$/.exec(what) ?? [];
  if (what === "bridges") {
    if (req.method !== "POST") return err(405, "Method not allowed");
    const id = q.get("bridgeId") ?? `${Date.now()}.${++seq}`;
    if (bridges.has(id)) return err(409, "Bridge with id already exists");
    bridges.set(id, { accountId: account.id, channels: [] });
    return json(200, { id, technology: "softmix", bridge_type: "mixing", bridge_class: "stasis", name: q.get("name") ?? "", channels: [] });
  }
  if (bridgeId) {
    const bridge = bridges.get(decodeURIComponent(bridgeId));
    if (!bridge || bridge.accountId !== account.id) return err(404, "Bridge not found");
    if (add) {
      if (req.method !== "POST") return err(405, "Method not allowed");
      const channel = q.get("channel");
      if (!channel) return err(400, "channel parameter not specified");
      bridge.channels.push(channel);
      return new Response(null, { status: 204 });
    }
    if (req.method === "GET") return json(200, { id: decodeURIComponent(bridgeId), technology: "softmix", bridge_type: "mixing", channels: bridge.channels });
    if (req.method !== "DELETE") return err(405, "Method not allowed");
    bridges.delete(decodeURIComponent(bridgeId));
    return new Response(null, { status: 204 });
  }
  // POST /channels/externalMedia
  if (req.method !== "POST") return err(405, "Method not allowed");
  for (const name of ["app", "external_host"]) if (!q.get(name)) return err(400, `${name} parameter not specified`);
  if (q.get("transport") !== "websocket" || q.get("encapsulation") !== "none") return err(400, "Only WebSocket media is simulated");
  const server = q.get("connection_type") === "server";
  const channelId = q.get("channelId") ?? `${Date.now()}.${++seq}`;
  const connectionId = server ? crypto.randomUUID() : String(q.get("external_host"));
  return json(200, {
    id: channelId,
    name: `WebSocket/${server ? "INCOMING" : connectionId}/0x${randomHex(6)}`,
    state: "Down",
    channelvars: { MEDIA_WEBSOCKET_CONNECTION_ID: connectionId, MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE: "160" },
  });
}
