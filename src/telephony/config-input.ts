// Turns a create or update request's `config` into what is stored: non-secret fields as JSON, secrets as
// sealed envelopes. No storage I/O here (only encryption), so every rule is testable on its own:
// masked-value handling, the partial merge, full re-validation of the merged result, key rotation on write.
import type { z } from "@hono/zod-openapi";
import { ApiError, zodIssuesToItems, type Loc, type ValidationItem } from "../lib/errors";
import type { SecretBox } from "../lib/secret-box";
import { classifySecretInput, looksMasked } from "../lib/mask";
import { clone, deepMerge, deletePath, getPath, setPath } from "./merge";
import { isObject, type Obj } from "../lib/helpers";
import { KEPT } from "./providers/define";
import type { Provider } from "./providers/types";
import { rekeySecret, sealSecret, storedSecrets, type SecretMap } from "./secrets";

export const CONFIG_LOC: Loc = ["body", "config"];

export type PreparedConfig = { config: Obj; secrets: SecretMap };

const locOf = (path: string): Loc => [...CONFIG_LOC, ...path.split(".")];

/**
 * A 422 must never echo a secret back: drop `input` from items at, above or below a sensitive field, and
 * from any item whose input is an object (it may hold secrets).
 */
export function redactSecretInputs(items: ValidationItem[], sensitive: readonly string[], base: Loc = CONFIG_LOC): ValidationItem[] {
  return items.map((item) => {
    if (!("input" in item)) return item;
    const inConfig = base.every((p, i) => item.loc[i] === p);
    const path = inConfig ? item.loc.slice(base.length).join(".") : null;
    const touchesSecret = path !== null && sensitive.some((s) => path === "" || s === path || s.startsWith(`${path}.`) || path.startsWith(`${s}.`));
    // A URL carrying `user:password@` (refused, see define.ts httpUrl) must not be echoed with its password either.
    const urlWithPassword = typeof item.input === "string" && /^[a-z][a-z0-9+.-]*:\/\/[^/?#@]*:[^/?#@]*@/i.test(item.input);
    // An unknown field may be a misspelt secret (`auth_tokn`): never echoed either.
    const unknownField = item.type === "extra_forbidden";
    if (!touchesSecret && !urlWithPassword && !unknownField && (item.input === null || typeof item.input !== "object")) return item;
    const { input: _dropped, ...rest } = item;
    return rest;
  });
}

function parseOr422(provider: Provider, schema: z.ZodType, data: unknown): Obj {
  const r = schema.safeParse(data);
  if (!r.success) throw new ApiError(422, redactSecretInputs(zodIssuesToItems(r.error.issues, CONFIG_LOC, data), provider.sensitive));
  return r.data as Obj;
}

/** Non-secret fields as stored: no discriminator (it has its own column), no ignored `from_numbers`. */
function storable(data: Obj): Obj {
  const out = clone(data);
  delete out.provider;
  delete out.from_numbers;
  return out;
}

function maskedInputError(path: string): ValidationItem {
  return {
    loc: locOf(path),
    msg: "Value looks like a masked secret but is not the current mask; send the full secret",
    type: "value_error",
  };
}

/** Create: validate, refuse copied masks (there is no stored secret to keep), seal every secret. */
export async function prepareCreate(provider: Provider, input: unknown, orgId: number, box: SecretBox): Promise<PreparedConfig> {
  const data = parseOr422(provider, provider.createSchema, input);
  const masked = provider.sensitive.filter((p) => {
    const v = getPath(data, p);
    return typeof v === "string" && looksMasked(v);
  });
  if (masked.length) throw new ApiError(422, masked.map(maskedInputError));

  const config = storable(data);
  const secrets: SecretMap = {};
  for (const path of provider.sensitive) {
    const v = getPath(config, path);
    if (typeof v === "string") secrets[path] = await sealSecret(box, orgId, path, v);
    deletePath(config, path);
  }
  return { config, secrets };
}

/**
 * Update: a true partial merge. `patch` holds only what changes; a secret sent back as its current mask
 * keeps the stored secret; the merged result must be a complete, valid configuration. Secrets sealed
 * under an older key are re-sealed under the current one (rotation happens on write).
 */
export async function prepareUpdate(
  provider: Provider,
  stored: { config: unknown; secrets: unknown },
  patchInput: unknown,
  orgId: number,
  box: SecretBox,
): Promise<PreparedConfig> {
  const current = storedSecrets(stored.secrets);
  const storedConfig: Obj = isObject(stored.config) ? clone(stored.config) : {};
  if (patchInput === undefined) return { config: storedConfig, secrets: await rekeySecrets(box, orgId, current) };

  if (!isObject(patchInput)) throw new ApiError(422, [{ loc: CONFIG_LOC, msg: "Input should be an object", type: "model_type" }]);
  const patch = clone(patchInput);
  if (patch.provider !== undefined && patch.provider !== provider.name) {
    throw new ApiError(422, [
      { loc: [...CONFIG_LOC, "provider"], msg: "Provider cannot be changed; create a new configuration instead", type: "value_error", input: patch.provider },
    ]);
  }
  delete patch.provider;
  // `from_numbers` is parsed with the patch (its documented limits hold on update too) and dropped on storing.

  const bad: ValidationItem[] = [];
  for (const path of provider.sensitive) {
    const v = getPath(patch, path);
    if (typeof v !== "string") continue;
    const verdict = classifySecretInput(v, current[path]?.mask ?? null);
    if (verdict.kind === "keep") deletePath(patch, path);
    else if (verdict.kind === "invalid") bad.push(maskedInputError(path));
  }
  if (bad.length) throw new ApiError(422, bad);

  const parsedPatch = parseOr422(provider, provider.updateSchema, patch);

  const base = clone(storedConfig);
  const kept = new Set<string>();
  for (const path of Object.keys(current)) if (setPath(base, path, KEPT)) kept.add(path);
  const merged = deepMerge(base, parsedPatch);

  const full = parseOr422(provider, provider.createSchema, { ...merged, provider: provider.name });
  const config = storable(full);
  const secrets: SecretMap = {};
  for (const path of provider.sensitive) {
    const v = getPath(config, path);
    if (v === KEPT && kept.has(path)) secrets[path] = await rekeySecret(box, orgId, path, current[path]);
    else if (typeof v === "string") secrets[path] = await sealSecret(box, orgId, path, v);
    deletePath(config, path);
  }
  return { config, secrets };
}

/** Re-seals every secret sealed under an older key; the others are returned as they are. */
export async function rekeySecrets(box: SecretBox, orgId: number, secrets: SecretMap): Promise<SecretMap> {
  const out: SecretMap = {};
  for (const [path, s] of Object.entries(secrets)) out[path] = await rekeySecret(box, orgId, path, s);
  return out;
}
