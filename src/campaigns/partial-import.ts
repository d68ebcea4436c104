// A partial import's request field and answer, shared by campaign create and append (docs/api.md): `on_invalid:
// "skip"` takes the rows that pass and answers the refused ones as CSV, each with its row and reason.
import { z } from "@hono/zod-openapi";
import { MAX_REFUSED_ROWS } from "./csv/refused";

export const OnInvalid = z.enum(["reject", "skip"]).default("reject").openapi({
  description:
    'What a row with a problem does. `reject` (default): the whole file is refused (422, nothing added). `skip`: the rows that pass are taken and the refused ones come back in `refused` as CSV with their `row` and `reason`; problems of the file itself (header, encoding, size, a template variable with no column, no row passing) still refuse it. With `import: "background"` the same happens in the background: the refused rows are kept with the campaign (`import_refused`, GET /campaign/{id}/refused.csv).',
});

export const RefusedRowsCsv = z
  .object({
    rows: z.int().openapi({ description: "Rows left out" }),
    csv: z.string().openapi({
      description: `The refused rows as CSV (CRLF): the file's own columns as read, then \`row\` (in the file, header = 1) and \`reason\` (every problem of the row, \`; \`-separated). At most ${MAX_REFUSED_ROWS} rows; remove the last two columns before sending the fixed rows again.`,
    }),
    truncated: z.boolean().openapi({ description: `True when more rows were refused than \`csv\` holds (${MAX_REFUSED_ROWS} at most, or 4 MB)` }),
  })
  .nullable()
  .openapi("RefusedRows", { description: 'With `on_invalid: "skip"`: the rows left out (null when every row passed)' });
