// A CSV of contacts as the campaign forms take it: chosen as a file, shown (and editable) as text, uploaded through
// the presigned flow (POST /s3/presigned-upload-url, then PUT of the bytes), and a 422's row problems shown at their
// row in a preview. Rows are numbered as a spreadsheet shows them and as the API's loc does: the header is row 1.
import { api, field, h, putUpload } from "./core.js";
import { parseCsv, rowProblems } from "./csv-parse.js";

/**
 * The control: returns { element, upload() → file_key, showProblems(err) → true when the error was about rows }.
 * `prefix` keeps ids unique when two are on one page.
 */
export function csvUpload(prefix) {
  const file = h("input", { type: "file", accept: ".csv,text/csv" });
  const text = h("textarea", { rows: 8, spellcheck: "false", class: "code" });
  const preview = h("div", { id: `${prefix}-preview` });
  const render = (problems = new Map()) => {
    const rows = parseCsv(text.value);
    if (!rows.length) return preview.replaceChildren();
    const width = Math.max(...rows.map((r) => r.length));
    preview.replaceChildren(
      h(
        "table",
        { class: "csv" },
        h("caption", {}, problems.size ? `${problems.size} row(s) with problems, marked below` : `${rows.length - 1} contact row(s)`),
        h(
          "thead",
          {},
          h("tr", {}, h("th", { scope: "col" }, "Row"), ...rows[0].map((c) => h("th", { scope: "col" }, c)), h("th", { scope: "col" }, "Problem")),
        ),
        h(
          "tbody",
          {},
          rows.slice(1, 501).map((r, i) => {
            const n = i + 2;
            const p = problems.get(n);
            return h(
              "tr",
              { id: `${prefix}-row-${n}`, class: p ? "bad-row" : null },
              h("th", { scope: "row" }, n),
              ...Array.from({ length: width }, (_, j) => h("td", { class: p?.some((x) => x.column === j + 1) ? "bad-cell" : null }, r[j] ?? "")),
              h("td", { class: p ? "field-error" : null }, p ? p.map((x) => x.msg).join("; ") : ""),
            );
          }),
        ),
      ),
    );
  };
  file.addEventListener("change", async () => {
    text.value = file.files?.[0] ? await file.files[0].text() : "";
    render();
  });
  text.addEventListener("input", () => render());
  const element = h(
    "div",
    { class: "csv-upload" },
    field(
      `${prefix}-file`,
      "Contacts file (CSV)",
      file,
      "A header row with phone_number (E.164), then one contact per row; other columns become the agent's variables.",
    ),
    field(`${prefix}-text`, "Contacts as text (edit to fix a row)", text),
    preview,
  );
  return {
    element,
    async upload() {
      const bytes = new TextEncoder().encode(text.value);
      const name = file.files?.[0]?.name ?? "contacts.csv";
      const signed = await api("/s3/presigned-upload-url", { method: "POST", json: { file_name: name, file_size: bytes.length, content_type: "text/csv" } });
      await putUpload(signed.upload_url, bytes, "text/csv");
      return signed.file_key;
    },
    showProblems(err) {
      if (!Array.isArray(err?.detail)) return false;
      const { byRow, general } = rowProblems(err.detail.filter((d) => d.loc?.[1] === "source_url"));
      if (!byRow.size && !general.length) return false;
      render(byRow);
      return { rows: byRow.size, general };
    },
    empty: () => !text.value.trim(),
  };
}
