// The configuration response object, built from a stored row without decrypting anything: secrets
// appear as their stored masks.
import type { telephonyConfigs } from "../db/schema";
import { buildChecklist, type Checklist } from "./providers/checklist";
import { clone, getPath, setPath } from "./merge";
import { isObject, type Obj } from "../lib/helpers";
import type { ConfigContext, Provider } from "./providers/types";
import { storedSecrets } from "./secrets";

export type ConfigRow = typeof telephonyConfigs.$inferSelect;

/** `credentials`: the provider's fields with masks for secrets (null for an unset nullable one). */
export function maskedCredentials(provider: Provider, row: Pick<ConfigRow, "config" | "secrets">, activeNumbers: string[]): Obj {
  const out: Obj = { provider: provider.name, ...(isObject(row.config) ? clone(row.config) : {}) };
  const secrets = storedSecrets(row.secrets);
  for (const path of provider.sensitive) {
    const parent = path.includes(".") ? getPath(out, path.slice(0, path.lastIndexOf("."))) : out;
    if (!isObject(parent)) continue; // e.g. external_pbx is null: nothing beneath it to show
    setPath(out, path, secrets[path]?.mask ?? null);
  }
  out.from_numbers = activeNumbers;
  return out;
}

/** What steps() and sipConnectivity() see on the read path: masks stand in for secrets. */
export function readContext(provider: Provider, row: ConfigRow, activeNumbers: string[]): ConfigContext {
  return {
    id: row.id,
    orgId: row.orgId,
    config: maskedCredentials(provider, row, activeNumbers),
    state: isObject(row.state) ? row.state : {},
    activeNumbers,
  };
}

export function checklistOf(provider: Provider, row: ConfigRow, activeNumbers: string[]): Checklist {
  const steps = provider.steps(readContext(provider, row, activeNumbers));
  return buildChecklist(steps, { inactive: row.inactive, reason: row.inactiveReason }, provider.docsUrl);
}

export function configView(provider: Provider, row: ConfigRow, activeNumbers: string[]) {
  const ctx = readContext(provider, row, activeNumbers);
  const steps = provider.steps(ctx);
  return {
    id: row.id,
    name: row.name,
    provider: provider.name,
    is_default_outbound: row.isDefaultOutbound,
    credentials: ctx.config,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    connectivity: provider.connectivity,
    inactive: row.inactive,
    inactive_since: row.inactiveSince,
    inactive_reason: row.inactiveReason,
    sip_connectivity: (provider.sipConnectivity?.(ctx) ?? null) as SipConnectivity | null,
    setup_checklist: buildChecklist(steps, { inactive: row.inactive, reason: row.inactiveReason }, provider.docsUrl),
    supports_trunks: provider.supportsTrunks,
    trunks: [] as Trunk[],
  };
}

export type SipConnectivity = {
  provider_display_name: string;
  regions: { region: string; inbound_transports: { transport: string; hostname: string; port: number; uri: string }[]; outbound_origin_ip?: string }[];
};
export type Trunk = {
  id: number;
  name: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  phone_number_count: number;
};
