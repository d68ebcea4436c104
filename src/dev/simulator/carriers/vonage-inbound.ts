// Vonage calls that come in, as its Application API v2 and Voice webhooks document them: the account's application
// (GET and PUT /v2/applications/{id}, Basic auth with the API key and secret; PUT replaces it, so a name is
// required), and a caller's call: Vonage answers it and requests the application's voice answer_url (`to`, `from`
// without the +, `uuid`, `conversation_uuid`), signed with an HS256 JWT whose payload_hash covers a POST body.
import { basicCredentials, vonageCallbackJwt } from "../sign";
import { DIGITS, E164, inboundCall, json, type Account, type Callback, type SimState } from "../types";

type Hook = { address: string; http_method: string };
type App = { id: string; name: string; capabilities: { voice: { webhooks: Record<string, Hook> } } & Record<string, unknown>; keys: { public_key: string } };

const problem = (status: number, title: string, detail: string) => json(status, { type: `https://developer.nexmo.com/api-errors#${status}`, title, detail });

/** The account's one application, as the dashboard would have created it for the configuration. */
export function vonageApp(account: Account): App {
  account.secret.application ??= {
    id: account.credentials.application_id,
    name: "edgedial",
    capabilities: {
      voice: {
        webhooks: {
          answer_url: { address: "https://example.com/answer", http_method: "GET" },
          event_url: { address: "https://example.com/event", http_method: "POST" },
        },
      },
      rtc: { webhooks: { event_url: { address: "https://example.com/rtc", http_method: "POST" } } },
    },
    keys: { public_key: "-----BEGIN PUBLIC KEY-----\nsimulated\n-----END PUBLIC KEY-----\n" },
  } satisfies App;
  return account.secret.application as App;
}

/** GET and PUT /v2/applications/{id}; null for another path. */
export function vonageApplicationApi(state: SimState, req: Request, path: string, body: string): Response | null {
  const m = /^\/v2\/applications\/([^/]+)$/.exec(path);
  if (!m) return null;
  const c = basicCredentials(req.headers.get("authorization"));
  const account = [...state.accounts.values()].find((a) => a.provider === "vonage" && a.credentials.api_key === c?.user);
  if (!account || c?.password !== account.credentials.api_secret) return problem(401, "Unauthorized", "Invalid credentials");
  state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });
  const app = vonageApp(account);
  if (decodeURIComponent(m[1]) !== app.id) return problem(404, "Not Found", "Application not found");
  if (req.method === "GET") return json(200, app);
  if (req.method !== "PUT") return problem(405, "Method Not Allowed", "Use GET or PUT");
  let p: any;
  try {
    p = JSON.parse(body);
  } catch {
    return problem(400, "Bad Request", "The request body is not valid JSON");
  }
  if (typeof p?.name !== "string" || !p.name) return problem(400, "Bad Request", "name is required");
  for (const k of ["answer_url", "event_url"]) {
    const h = p.capabilities?.voice?.webhooks?.[k];
    if (h !== undefined && (!/^https?:\/\//.test(String(h?.address)) || !["GET", "POST"].includes(h?.http_method)))
      return problem(400, "Bad Request", `capabilities.voice.webhooks.${k} needs an address and http_method GET or POST`);
  }
  // PUT replaces the application: what is left out is gone (the keys stay unless new ones are given).
  Object.assign(app, { name: p.name, capabilities: p.capabilities ?? {}, ...(p.keys ? { keys: p.keys } : {}) });
  return json(200, app);
}

/** A caller dials `to`: the call registered (answered) and the signed answer webhook for the test to send. */
export async function placeVonageInbound(state: SimState, account: Account, o: { to: string; from: string; url?: string; stale?: boolean }): Promise<Callback> {
  if (!E164.test(o.to) && !DIGITS.test(o.to)) throw new Error(`${o.to} is not a phone number`);
  const hooks = vonageApp(account).capabilities.voice?.webhooks ?? {};
  const answer = o.url ? { address: o.url, http_method: "POST" } : hooks.answer_url;
  const uuid = crypto.randomUUID();
  const digits = (n: string) => n.replace(/^\+/, "");
  const call = inboundCall(state, {
    id: uuid,
    provider: "vonage",
    accountId: account.id,
    to: digits(o.to),
    from: digits(o.from),
    answerUrl: answer.address,
    statusUrl: hooks.event_url?.address,
    urls: { answer_method: answer.http_method },
    state: "answered",
    extra: { conversation: `CON-${crypto.randomUUID()}` },
  });
  const fields = { to: call.to, from: call.from, uuid, conversation_uuid: String(call.extra.conversation), region_url: "https://api-us-3.vonage.com" };
  const body = answer.http_method === "POST" ? JSON.stringify(fields) : "";
  const claims = {
    iat: Math.floor(Date.now() / 1000) - (o.stale ? 400 : 0),
    jti: crypto.randomUUID(),
    iss: "Vonage",
    api_key: account.credentials.api_key,
    application_id: account.credentials.application_id,
  };
  const jwt = await vonageCallbackJwt(account.credentials.signature_secret, claims, body);
  const headers = { Authorization: `Bearer ${jwt}`, ...(body ? { "Content-Type": "application/json" } : {}) };
  if (answer.http_method === "POST") return { kind: "answer", method: "POST", url: answer.address, body, headers };
  return {
    kind: "answer",
    method: "GET",
    url: `${answer.address}${answer.address.includes("?") ? "&" : "?"}${new URLSearchParams(fields)}`,
    body: "",
    headers,
  };
}
