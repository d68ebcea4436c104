// Reading a contacts CSV in the page (pure: no DOM), for the preview and for placing a 422's row problems.
/** Splits CSV text into records of fields (RFC 4180 quotes; enough for a preview, the API does the real reading). */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  if (cell !== "" || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** Groups a 422's items by row: loc ["body", "source_url", row, column?]. Items without a row are returned apart. */
export function rowProblems(items) {
  const byRow = new Map();
  const general = [];
  for (const it of items) {
    const row = it.loc?.[2];
    if (typeof row !== "number") general.push(it);
    else byRow.set(row, [...(byRow.get(row) ?? []), { column: it.loc[3], msg: it.msg }]);
  }
  return { byRow, general };
}
