// What a carrier does once a call's media socket closes while the call is up, read from the document that was
// running, as each carrier documents it: TwiML and CXML run the verb after `</Connect>`, Plivo XML (keepCallAlive)
// the element after `</Stream>`; the simulator follows a `<Redirect>` there, and otherwise the document has run out
// and the call ends. (Vonage's NCCO and Telnyx's events are read in their own carrier files.)

export type AfterStream = { kind: "redirect"; url: string; method: "GET" | "POST" } | { kind: "end" };

const xmlUnescape = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp);/g, (_m, e: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e] as string);

/** The verb after the stream (`</Connect>` for TwiML/CXML, `</Stream>` for Plivo XML), when it is a Redirect. */
export function afterStream(document: string, closing: "Connect" | "Stream"): AfterStream {
  const at = document.indexOf(`</${closing}>`);
  if (at < 0) return { kind: "end" };
  const rest = document.slice(at + closing.length + 3).trim();
  const m = /^<Redirect\b([^>]*)>([^<]+)<\/Redirect>/.exec(rest);
  if (!m) return { kind: "end" };
  const method = /\bmethod="(GET|POST)"/i.exec(m[1])?.[1]?.toUpperCase() === "GET" ? "GET" : "POST";
  return { kind: "redirect", url: xmlUnescape(m[2].trim()), method };
}

/** A redirect's request as a form-posting carrier makes it: POST with the fields in the body, GET with them in the query. */
export function redirectRequest(target: { url: string; method: "GET" | "POST" }, fields: Record<string, string>): { url: string; body: string } {
  const form = new URLSearchParams(fields).toString();
  if (target.method === "POST") return { url: target.url, body: form };
  return { url: `${target.url}${target.url.includes("?") ? "&" : "?"}${form}`, body: "" };
}
