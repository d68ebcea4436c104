// What every dashboard page shares: building DOM safely, the API client and its errors, the alert region, the
// confirmation dialog, page titles and stale-navigation guards, and showing a 422's items at the fields they name.
export const API = "/api/v1";
const KEY_STORAGE = "edgedial.apiKey";

/** A DOM element: h("a", { href: "#" }, "text", child). Text is always set as text, never parsed as HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "value") el.value = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : String(c));
  return el;
}

export const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

export class ApiError extends Error {
  constructor(status, detail, body) {
    super(typeof detail === "string" ? detail : `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
    this.body = body;
  }
}

export const getKey = () => sessionStorage.getItem(KEY_STORAGE);
export const setKey = (key) => (key ? sessionStorage.setItem(KEY_STORAGE, key) : sessionStorage.removeItem(KEY_STORAGE));

/** One API call. `json` sends JSON; `body` with `type` sends raw bytes (a CSV); `text` returns the body unparsed. */
export async function api(path, { method = "GET", key = getKey(), json, body, type, text: asText } = {}) {
  const headers = { "X-API-Key": key ?? "", Accept: asText ? "*/*" : "application/json" };
  if (json !== undefined) headers["Content-Type"] = "application/json";
  else if (type) headers["Content-Type"] = type;
  const res = await fetch(API + path, { method, headers, body: json === undefined ? body : JSON.stringify(json) });
  const text = await res.text();
  if (res.ok && asText) return text;
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!res.ok) throw new ApiError(res.status, parsed && typeof parsed === "object" && "detail" in parsed ? parsed.detail : text || res.statusText, parsed);
  return parsed;
}

/** PUT of a file to a presigned upload URL (same origin locally; an R2 host when the deployment signs for R2). */
export async function putUpload(url, file, type) {
  const res = await fetch(url, { method: "PUT", headers: { "Content-Type": type }, body: file });
  if (!res.ok) throw new ApiError(res.status, (await res.text()) || res.statusText);
}

const alertBox = document.getElementById("alert");

/** Shows an error in the API's contract shape: `detail` as a message, or a 422's list of located problems. */
export function showError(err) {
  alertBox.replaceChildren();
  if (err instanceof ApiError) {
    alertBox.append(h("strong", {}, `Error ${err.status}: `));
    if (Array.isArray(err.detail)) {
      alertBox.append(
        "The request was not valid.",
        h(
          "ul",
          {},
          err.detail.slice(0, 20).map((d) => h("li", {}, `${(d.loc ?? []).join(".")}: ${d.msg ?? d.type ?? ""}`)),
        ),
      );
    } else alertBox.append(String(err.detail));
  } else alertBox.append(h("strong", {}, "Error: "), String(err?.message ?? err));
  alertBox.hidden = false;
}

export function clearError() {
  alertBox.hidden = true;
  alertBox.replaceChildren();
}

const dialog = document.getElementById("confirm");
export function confirmAction(title, text, danger) {
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  const yes = document.getElementById("confirm-yes");
  yes.textContent = title;
  yes.className = danger ? "danger" : "primary";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    document.getElementById("confirm-no").focus();
  });
}

export const main = document.getElementById("main");

/** Counts navigations: a page whose data arrives after the user went elsewhere does not render. */
export const nav = { count: 0 };
export class Superseded extends Error {}
export async function load(path) {
  const mine = nav.count;
  const body = await api(path);
  if (mine !== nav.count) throw new Superseded();
  return body;
}

export function page(title, ...children) {
  const heading = h("h1", { tabindex: "-1" }, title);
  main.replaceChildren(heading, ...children);
  document.title = `${title} · edgedial`;
  return heading;
}

export const stateBadge = (state) => h("span", { class: "state" }, state);

export function fact(dl, label, value) {
  dl.append(h("dt", {}, label), h("dd", {}, value ?? "—"));
}

/** A labelled form field; its error slot (aria-describedby) takes the API's message for this field. */
export function field(id, label, control, hint) {
  control.id = id;
  if (!control.name) control.name = id;
  const error = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  const hintEl = hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null;
  control.setAttribute("aria-describedby", [hintEl ? `${id}-hint` : "", `${id}-error`].join(" ").trim());
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hintEl, error);
}

/** Puts `message` under the field with this id (marking it invalid), or clears it with null. */
export function setFieldError(id, message) {
  const control = document.getElementById(id);
  const slot = document.getElementById(`${id}-error`);
  if (!control || !slot) return false;
  slot.textContent = message ?? "";
  slot.hidden = !message;
  if (message) control.setAttribute("aria-invalid", "true");
  else control.removeAttribute("aria-invalid");
  return true;
}

export function clearFieldErrors(root) {
  for (const slot of root.querySelectorAll(".field-error")) {
    slot.hidden = true;
    slot.textContent = "";
  }
  for (const c of root.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
}

/**
 * Shows a 422's items at their fields: `idOf(loc)` names the field for an item's loc (["body", "name"]) or null.
 * Items without a field go to the alert region. Returns how many were placed at a field.
 */
export function placeErrors(err, idOf) {
  if (!(err instanceof ApiError) || !Array.isArray(err.detail)) {
    showError(err);
    return 0;
  }
  let placed = 0;
  const rest = [];
  for (const item of err.detail) {
    const id = idOf(item.loc ?? []);
    if (id && setFieldError(id, item.msg ?? item.type)) placed++;
    else rest.push(item);
  }
  if (rest.length) showError(new ApiError(err.status, rest));
  else clearError();
  return placed;
}

/**
 * A table body of one list's rows with a "Show more" button while the API has another page (next_cursor).
 * Returns [tbody, button]; the caption counts the rows shown.
 */
export function pagedRows(list, path, rowOf, caption, noun) {
  const body = h("tbody", {}, list.items.map(rowOf));
  let shown = list.items.length;
  let cursor = list.next_cursor;
  const count = () => {
    caption.textContent = `${shown} ${noun}${shown === 1 ? "" : "s"}${more.hidden ? "" : " shown"}, newest first`;
  };
  const sep = path.includes("?") ? "&" : "?";
  const more = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        try {
          const next = await api(`${path}${sep}cursor=${encodeURIComponent(cursor)}`);
          body.append(...next.items.map(rowOf));
          shown += next.items.length;
          cursor = next.next_cursor;
          more.hidden = !cursor;
          count();
        } catch (err) {
          showError(err);
        }
      },
    },
    `Show more ${noun}s`,
  );
  more.hidden = !cursor;
  count();
  return [body, more];
}

/** A table with a caption and column headings; `num` lists the numeric columns (right-aligned). */
export function table(caption, headings, body, num = []) {
  return h(
    "table",
    {},
    caption,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headings.map((t, i) => h("th", { scope: "col", class: num.includes(i) ? "num" : null }, t)),
      ),
    ),
    body,
  );
}

/** Saves text as a file the browser downloads (results.csv). */
export function downloadText(name, text, type = "text/csv") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
