// OpenAPI shapes of the telephony operations (requests and responses).
import { z } from "@hono/zod-openapi";
import { PROVIDER_LIST } from "./providers/registry";
import { PROVIDER_NAMES } from "./providers/types";
import { refId } from "../lib/schemas";

type Variants = [z.ZodObject, z.ZodObject, ...z.ZodObject[]];
const createVariants = PROVIDER_LIST.map((p) => p.createSchema) as Variants;
const updateVariants = PROVIDER_LIST.map((p) => p.updateSchema) as Variants;

const name = z.string().trim().min(1).max(64).describe("Unique within the organization, 1–64 characters.");

// Request bodies are strict objects: an unknown field is a 422 `extra_forbidden`.
export const CreateConfigBody = z
  .strictObject({
    name,
    is_default_outbound: z.boolean().default(false).describe("Make this the organization's default for outbound calls (unsets the previous default)."),
    config: z.discriminatedUnion("provider", createVariants).describe("Provider variant, selected by `provider`."),
  })
  .openapi("CreateTelephonyConfig");

/** Documents the update body: every variant, with all fields optional (a partial update). */
export const UpdateConfigBodyDoc = z
  .strictObject({
    name: name.optional(),
    is_default_outbound: z.boolean().optional().describe("true makes this the default; false unsets it."),
    config: z
      .union(updateVariants)
      .optional()
      .describe("Only the fields that change. `provider` may be omitted and cannot change. A secret sent back as its current mask keeps the stored secret."),
  })
  .openapi("UpdateTelephonyConfig");

/**
 * Validates the update body at the edge. `config` is checked against the stored provider's schema in the
 * handler, since `provider` may be omitted and is only known once the configuration is loaded.
 */
export const UpdateConfigBody = z.strictObject({
  name: name.optional(),
  is_default_outbound: z.boolean().optional(),
  config: z.looseObject({ provider: z.enum(PROVIDER_NAMES).optional() }).optional(),
});

const Step = z
  .object({ key: z.string(), title: z.string(), description: z.string(), complete: z.boolean(), blocks_outbound: z.boolean() })
  .openapi("SetupStep");

const Checklist = z
  .object({
    ready_for_outbound: z.boolean().describe("Never true while a blocking step is incomplete or the configuration is inactive."),
    outbound_blocked_reason: z.string().nullable(),
    steps: z.array(Step),
    docs_url: z.string(),
  })
  .openapi("SetupChecklist");

const SipConnectivity = z
  .object({
    provider_display_name: z.string(),
    regions: z.array(
      z.object({
        region: z.string(),
        inbound_transports: z.array(z.object({ transport: z.string(), hostname: z.string(), port: z.number().int(), uri: z.string() })),
        outbound_origin_ip: z.string().optional(),
      }),
    ),
  })
  .openapi("SipConnectivity");

const Trunk = z
  .object({
    id: z.number().int(),
    name: z.string(),
    enabled: z.boolean(),
    settings: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
    phone_number_count: z.number().int(),
  })
  .openapi("Trunk");

export const TelephonyConfig = z
  .object({
    id: z.number().int(),
    name: z.string(),
    provider: z.enum(PROVIDER_NAMES),
    is_default_outbound: z.boolean(),
    credentials: z.record(z.string(), z.unknown()).describe("The provider's fields; sensitive values are masked."),
    created_at: z.string(),
    updated_at: z.string(),
    connectivity: z.enum(["api", "sip"]),
    inactive: z.boolean(),
    inactive_since: z.string().nullable(),
    inactive_reason: z.string().nullable(),
    sip_connectivity: SipConnectivity.nullable(),
    setup_checklist: Checklist,
    supports_trunks: z.boolean(),
    trunks: z.array(Trunk),
  })
  .openapi("TelephonyConfig");

export const DeletedConfig = z.object({ id: z.number().int(), deleted: z.literal(true) }).openapi("DeletedTelephonyConfig");

const FieldMetaSchema = z.object({
  name: z.string().describe("Dotted path for nested fields."),
  type: z.enum(["string", "boolean", "integer", "object", "array"]),
  required: z.boolean(),
  sensitive: z.boolean(),
  description: z.string(),
  default: z.unknown().optional(),
  nullable: z.boolean().optional(),
});

export const ProviderInfo = z
  .object({
    name: z.enum(PROVIDER_NAMES),
    display_name: z.string(),
    connectivity: z.enum(["api", "sip"]),
    supports_trunks: z.boolean(),
    docs_url: z.string(),
    fields: z.array(FieldMetaSchema),
  })
  .openapi("TelephonyProvider");

// Phone numbers.

export const PhoneNumber = z
  .object({
    id: z.number().int(),
    address: z.string().describe("E.164 for carriers; ari also takes extensions, SIP URIs and dial strings."),
    label: z.string().nullable(),
    is_active: z.boolean(),
    is_default_caller_id: z.boolean(),
    inbound_workflow_id: z
      .number()
      .int()
      .nullable()
      .describe("The agent that answers calls to this number; null: callers hear that the number takes no calls."),
    require_passing_tests: z
      .boolean()
      .describe(
        "The attached agent takes this number's calls only while its current version passed its newest test suite run; otherwise callers hear that the number takes no calls (docs/agent-tests.md).",
      ),
    inbound_url: z
      .string()
      .nullable()
      .describe(
        "Where the carrier must send calls to this number. Set automatically on attach where the carrier's API allows (Twilio, Plivo, Vobiz, Telnyx, Vonage, Cloudonix); paste it by hand for Exotel (the App Bazaar flow's Passthru/Voicebot URL) or use it from Asterisk's dialplan. It carries a secret token.",
      ),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("PhoneNumber");

const address = z.string().max(255).describe("E.164 (e.g. +14155550100); ari also takes extensions, SIP URIs and dial strings.");
const label = z.string().max(255).nullable().describe("A name for the number.");
const requirePassingTests = z
  .boolean()
  .describe(
    "Attach only an agent whose current version passed its newest test suite run (a 409 naming why otherwise), and put calls through only while it has; a call that finds the version untested or failing is answered with a short message and hung up.",
  );
const inboundWorkflowId = refId()
  .nullable()
  .describe("The agent (workflow id) that answers calls to this number; null detaches it. Attaching points the carrier at edgedial where its API allows.");

export const CreatePhoneNumberBody = z
  .strictObject({
    address,
    label: label.optional(),
    is_active: z.boolean().default(true),
    is_default_caller_id: z.boolean().default(false).describe("Present this number as caller ID (unsets the previous default of the configuration)."),
    inbound_workflow_id: inboundWorkflowId.optional(),
    require_passing_tests: requirePassingTests.default(false),
  })
  .openapi("CreatePhoneNumber");

export const UpdatePhoneNumberBody = z
  .strictObject({
    address: address.optional(),
    label: label.optional(),
    is_active: z.boolean().optional(),
    is_default_caller_id: z.boolean().optional(),
    inbound_workflow_id: inboundWorkflowId.optional(),
    require_passing_tests: requirePassingTests.optional(),
  })
  .openapi("UpdatePhoneNumber");

export const DeletedPhoneNumber = z.object({ id: z.number().int(), deleted: z.literal(true) }).openapi("DeletedPhoneNumber");
