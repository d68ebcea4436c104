// One table of fields per provider, from which everything else is derived: the create schema (with
// defaults), the update schema (every field optional, no defaults, so a partial update never resets a
// field), the list of sensitive paths and the field metadata shown by GET /telephony-providers.
import { z } from "@hono/zod-openapi";
import type { FieldMeta, Provider, ProviderName } from "./types";
import { classifyHost, NEVER_ALLOWED } from "../../lib/url-guard";

type Common = {
  description: string;
  /** Must be present on create (and has no default). */
  required?: boolean;
  nullable?: boolean;
  default?: unknown;
};
export type LeafSpec = Common & { kind: "leaf"; type: FieldMeta["type"]; schema: z.ZodType; sensitive?: boolean };
export type GroupSpec = Common & { kind: "group"; fields: Record<string, FieldSpec> };
export type FieldSpec = LeafSpec | GroupSpec;
export type FieldTable = Record<string, FieldSpec>;

type Opts = Omit<Common, "description">;

// Field builders. Required strings must not be empty: an empty credential can only fail later, at dial time.

/** A documented shape (e.g. Twilio's `AC` + 32 hex): refused on save with `message`, located at the field. */
export type Shape = { pattern: RegExp; message: string };

export const text = (description: string, opts: Opts & { max?: number; shape?: Shape } = {}): LeafSpec => {
  const { shape, ...rest } = opts;
  const base = z
    .string()
    .min(opts.required ? 1 : 0)
    .max(opts.max ?? 255);
  return { kind: "leaf", type: "string", schema: shape ? base.regex(shape.pattern, shape.message) : base, description, ...rest };
};

/** An id or name of a carrier object; null (or omitted) means "not set". */
export const optionalId = (description: string): LeafSpec => ({
  kind: "leaf",
  type: "string",
  schema: z.string().min(1).max(255),
  description,
  nullable: true,
});

export const httpUrl = (description: string, opts: Opts = {}): LeafSpec => ({
  kind: "leaf",
  type: "string",
  // A password in the URL's userinfo would be stored in plain text and returned unmasked: refused; passwords go
  // in their own sensitive fields (e.g. ari `app_password`). A user name alone is fine.
  schema: z
    .url({ protocol: /^https?$/, error: "Must be an http(s) URL" })
    .max(2048)
    .refine((v) => !URL.canParse(v) || new URL(v).password === "", "Must not contain a password; put it in the password field")
    // Metadata, link-local, unspecified, multicast and reserved addresses are never a PBX (SSRF, lib/url-guard.ts).
    .refine(
      (v) => !URL.canParse(v) || !NEVER_ALLOWED.has(classifyHost(new URL(v).hostname)),
      "Must not point at a metadata, link-local, unspecified, multicast or reserved address",
    ),
  description,
  ...opts,
});

/** Masked on read, encrypted at rest. Content is opaque: kept secrets are never decrypted to re-validate. */
// Stands in for a kept secret while the merged configuration is re-validated (telephony/config-input.ts), so kept
// secrets are never decrypted just to be checked. Only honoured at paths where it was put (never from client input).
export const KEPT = "\u0000kept\u0000";

/** A secret; a documented `shape` is checked when a value is sent (a kept one was checked when it was). */
export const secret = (description: string, opts: Opts & { max?: number; shape?: Shape } = {}): LeafSpec => {
  const { shape, ...rest } = opts;
  const base = z
    .string()
    .min(1)
    .max(opts.max ?? 1024);
  const schema = shape ? base.refine((v) => v === KEPT || shape.pattern.test(v), shape.message) : base;
  return { kind: "leaf", type: "string", schema, description, sensitive: true, ...rest };
};

export const flag = (description: string, dflt: boolean): LeafSpec => ({
  kind: "leaf",
  type: "boolean",
  schema: z.boolean(),
  description,
  default: dflt,
});

export const integer = (description: string, min: number, max: number, dflt: number): LeafSpec => ({
  kind: "leaf",
  type: "integer",
  schema: z.number().int().min(min).max(max),
  description,
  default: dflt,
});

export const constant = (value: string, description: string): LeafSpec => ({
  kind: "leaf",
  type: "string",
  schema: z.literal(value),
  description,
  default: value,
});

export const oneOf = (values: readonly [string, ...string[]], description: string, opts: Opts = {}): LeafSpec => ({
  kind: "leaf",
  type: "string",
  schema: z.enum(values),
  description,
  ...opts,
});

export const custom = (schema: z.ZodType, type: FieldMeta["type"], description: string, opts: Opts = {}): LeafSpec => ({
  kind: "leaf",
  type,
  schema,
  description,
  ...opts,
});

export const group = (description: string, fields: FieldTable, opts: Opts = {}): GroupSpec => ({
  kind: "group",
  fields,
  description,
  ...opts,
});

/** Every variant accepts `from_numbers` and ignores it: numbers are managed by the phone-number operations. */
const FROM_NUMBERS: LeafSpec = {
  kind: "leaf",
  type: "array",
  schema: z.array(z.string().max(255)).max(1000),
  description: "Accepted and ignored; numbers are managed through the phone-number operations of this configuration.",
};

function createField(spec: FieldSpec): z.ZodType {
  let s: z.ZodType = spec.kind === "leaf" ? spec.schema : z.strictObject(createShape(spec.fields));
  if (spec.nullable) s = s.nullable();
  if (spec.default !== undefined) s = s.default(spec.default as never);
  else if (!spec.required) s = s.optional();
  return s.describe(spec.description);
}

function updateField(spec: FieldSpec): z.ZodType {
  let s: z.ZodType = spec.kind === "leaf" ? spec.schema : z.strictObject(updateShape(spec.fields));
  if (spec.nullable) s = s.nullable();
  return s.optional().describe(spec.description);
}

const createShape = (fields: FieldTable) => Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, createField(f)]));
const updateShape = (fields: FieldTable) => Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, updateField(f)]));

function walk(fields: FieldTable, prefix: string, visit: (path: string, spec: FieldSpec) => void) {
  for (const [key, spec] of Object.entries(fields)) {
    const path = prefix ? `${prefix}.${key}` : key;
    visit(path, spec);
    if (spec.kind === "group") walk(spec.fields, path, visit);
  }
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

export type ConfigDefinition = {
  createSchema: z.ZodObject;
  updateSchema: z.ZodObject;
  sensitive: readonly string[];
  fields: readonly FieldMeta[];
};

export function defineConfig(name: ProviderName, table: FieldTable): ConfigDefinition {
  const fields: FieldTable = { ...table, from_numbers: FROM_NUMBERS };
  const providerDesc = `Provider discriminator, always "${name}".`;
  // Strict: a misspelt field is a located 422, not silently dropped. Groups are strict too.
  const createSchema = z.strictObject({ provider: z.literal(name).describe(providerDesc), ...createShape(fields) }).openapi(`${pascal(name)}Config`);
  const updateSchema = z
    .strictObject({
      provider: z.literal(name).optional().describe(`${providerDesc} May be omitted; if sent it must equal the stored provider.`),
      ...updateShape(fields),
    })
    .openapi(`${pascal(name)}ConfigUpdate`);

  const sensitive: string[] = [];
  const meta: FieldMeta[] = [];
  walk(fields, "", (path, spec) => {
    const isSecret = spec.kind === "leaf" && !!spec.sensitive;
    if (isSecret) sensitive.push(path);
    const m: FieldMeta = {
      name: path,
      type: spec.kind === "leaf" ? spec.type : "object",
      required: !!spec.required && spec.default === undefined,
      sensitive: isSecret,
      description: spec.description,
    };
    if (spec.default !== undefined) m.default = spec.default;
    if (spec.nullable) m.nullable = true;
    meta.push(m);
  });
  return { createSchema, updateSchema, sensitive, fields: meta };
}

/** What a provider's config.ts exports. */
export type ProviderConfigModule = {
  displayName: string;
  docsUrl: string;
  definition: ConfigDefinition;
  steps: Provider["steps"];
  sipConnectivity?: Provider["sipConnectivity"];
};

/**
 * Assembles a provider from its config module and its calling half. Most carriers are API carriers
 * without trunks and not PBXs, so those are the defaults; a provider states only where it differs.
 */
export function defineProvider(
  name: ProviderName,
  config: ProviderConfigModule,
  parts: Pick<Provider, "calls" | "provision"> & Partial<Pick<Provider, "connectivity" | "pbx" | "supportsTrunks" | "localOnly">>,
): Provider {
  const provider: Provider = {
    name,
    displayName: config.displayName,
    connectivity: parts.connectivity ?? "api",
    pbx: parts.pbx ?? false,
    docsUrl: config.docsUrl,
    supportsTrunks: parts.supportsTrunks ?? false,
    ...config.definition,
    steps: config.steps,
    calls: parts.calls,
  };
  // Only set when present, as before: optional members stay absent rather than undefined.
  if (parts.provision) provider.provision = parts.provision;
  if (parts.localOnly) provider.localOnly = true;
  if (config.sipConnectivity) provider.sipConnectivity = config.sipConnectivity;
  return provider;
}
