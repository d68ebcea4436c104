// Test support: every JSON request body a test sends is checked against the request schema of its operation in the
// document the Worker serves. A body the server accepts (2xx) that the document refuses fails the test: the document,
// not the test, is then wrong, and a generated client would refuse that call. Deliberately bad bodies (4xx) pass.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Doc = { paths: Record<string, Record<string, any>>; components?: Record<string, unknown> };
type Operation = { re: RegExp; params: number; method: string; path: string; schema: Record<string, unknown> };

let loaded: Promise<{ ops: Operation[]; ajv: Ajv2020 }> | null = null;
const compiled = new Map<Operation, ValidateFunction>();

/** The served document's JSON request bodies, literal paths before templated ones (`/campaign/create` before `{id}`). */
function load(fetchDoc: () => Promise<Doc>) {
  loaded ??= fetchDoc().then((doc) => {
    const ops: Operation[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const schema = op?.requestBody?.content?.["application/json"]?.schema;
        if (!schema) continue;
        const pattern = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
        ops.push({ re: new RegExp(`^${pattern}/?$`), params: (path.match(/\{/g) ?? []).length, method: method.toUpperCase(), path, schema });
      }
    }
    ops.sort((a, b) => a.params - b.params);
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; `example` and `x-` keys are annotations, hence not strict.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: "edgedial:openapi", components: doc.components ?? {} });
    return { ops, ajv };
  });
  return loaded;
}

/**
 * Why the document refuses `body` for this request, or null when it accepts it (or documents no JSON body there).
 * `fetchDoc` reads /api/v1/openapi.json once per test file.
 */
export async function documentRefuses(method: string, url: string, body: unknown, fetchDoc: () => Promise<Doc>): Promise<string | null> {
  const { ops, ajv } = await load(fetchDoc);
  const path = new URL(url, "http://x").pathname;
  const op = ops.find((o) => o.method === method.toUpperCase() && o.re.test(path));
  if (!op) return null;
  let validate = compiled.get(op);
  if (!validate) {
    // The operation's schema under the document's components, so its `#/components/...` references resolve.
    const rooted = JSON.parse(JSON.stringify(op.schema).replaceAll('"#/components/', '"edgedial:openapi#/components/'));
    validate = ajv.compile(rooted);
    compiled.set(op, validate);
  }
  if (validate(body)) return null;
  return `${op.method} ${op.path}: ${ajv.errorsText(validate.errors, { dataVar: "body" })}`;
}
