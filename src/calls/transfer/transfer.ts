// The calls module's side of handing a call to a person: the destination checked like any dial (the number's form,
// the organization's calling policy), the request recorded on the run, the whisper kept for the carrier to fetch,
// then the carrier's own transfer (cold or warm) through the provider contract. Nothing here throws for an expected
// problem: a refusal is an outcome with its reason on the run.
import { eq } from "drizzle-orm";
import type { TransferRequest } from "../../agent/voice-agent";
import { workflowRuns } from "../../db/schema";
import { wavFile } from "../../lib/audio/wav";
import { isoNow } from "../../lib/clock";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { publicUrl } from "../../lib/settings";
import { destinationRefusal } from "../../telephony/calling-policy";
import { pbxTemplatesOf } from "../../telephony/pbx-destinations";
import { normalizeNumber } from "../../telephony/numbers";
import { providerEnvOf } from "../../telephony/provisioning";
import type { ProviderCalls, TransferLeg } from "../../telephony/providers/types";
import { loadConfigContext, resolveTelephonyConfig } from "../../telephony/resolve";
import { callbackToken } from "../callbacks/callback-urls";
import { campaignCallIds } from "../runs/campaign-call-ids";
import { getOrgRun, type RunRow } from "../runs/runs";
import type { TransferStarted } from "../session/ports";
import { settled, type StoredTransfer, type TransferSettled } from "../runs/transfer-record";

/** The transfer's URLs under /api/v1/telephony/{provider}/: its document, the person's leg's reports, the whisper. */
export const TRANSFER_PATHS = { document: "transfer", status: "transfer-status", whisper: "transfer-whisper" } as const;

async function transferUrls(env: Env, provider: string, runId: number) {
  const token = await callbackToken(env.CALLBACK_SECRET, provider, runId);
  const base = providerEnvOf(env).publicBaseUrl;
  const at = (kind: keyof typeof TRANSFER_PATHS) => publicUrl(base, `/api/v1/telephony/${provider}/${TRANSFER_PATHS[kind]}/${runId}/${token}`);
  return { documentUrl: at("document"), statusUrl: at("status"), whisperUrl: at("whisper") };
}

/** The leg as the carrier was (or is) asked for it, from the run and its record. */
export async function legOf(env: Env, run: RunRow, t: StoredTransfer, callId: string): Promise<TransferLeg> {
  const urls = await transferUrls(env, run.provider ?? "", run.id);
  return {
    runId: run.id,
    providerCallId: callId,
    to: t.destination,
    from: t.from,
    mode: t.mode,
    timeoutSeconds: t.timeout_seconds,
    statusUrl: urls.statusUrl,
    documentUrl: urls.documentUrl,
    ...(t.mode === "warm" ? { whisper: { url: t.whisper_key ? urls.whisperUrl : null, text: t.whisper_text ?? "" } } : {}),
    ...(t.room ? { room: t.room } : {}),
  };
}

export async function saveTransfer(env: Env, runId: number, t: StoredTransfer): Promise<void> {
  await getDb(env).update(workflowRuns).set({ transfer: t }).where(eq(workflowRuns.id, runId)).run();
}

/** Settles the run's transfer (once) and says so in the log. */
export async function settleTransfer(env: Env, run: Pick<RunRow, "id">, t: StoredTransfer, outcome: TransferSettled, message: string | null) {
  const done = settled(t, outcome, message, isoNow());
  if (done !== t) await saveTransfer(env, run.id, done);
  log(outcome === "connected" ? "info" : "warning", "call_transfer", { run_id: run.id, mode: t.mode, outcome, message });
  return done;
}

/** What the session's `transfer` port does: check, record, ask the carrier; the answer is already on the run. */
export async function startTransfer(env: Env, orgId: number, runId: number, req: TransferRequest): Promise<TransferStarted> {
  const db = getDb(env);
  const run = await getOrgRun(db, orgId, runId);
  if (!run?.telephonyConfigurationId) return { state: "failed", message: "The call has no carrier to transfer it through" };
  const cfg = await resolveTelephonyConfig(env, orgId, run.telephonyConfigurationId);
  const calls = cfg.provider.calls as ProviderCalls;
  const record: StoredTransfer = {
    destination: req.destination,
    mode: req.mode,
    requested_mode: req.mode,
    requested_at: isoNow(),
    outcome: null,
    outcome_at: null,
    message: null,
    timeout_seconds: Math.max(5, Math.min(120, Math.round(req.timeoutSeconds || 30))),
    from: run.fromNumber,
    leg_id: null,
    room: null,
    whisper_key: null,
    whisper_text: req.summary ?? null,
  };
  const fail = async (message: string, state: "failed" | "unsupported" = "failed"): Promise<TransferStarted> => {
    await settleTransfer(env, run, record, "failed", message);
    return { state, message };
  };
  const number = normalizeNumber(req.destination, cfg.provider.pbx);
  if (!number.ok) return fail(`The destination ${JSON.stringify(req.destination)} cannot be dialed: ${number.message}`);
  record.destination = number.value;
  const refused = await destinationRefusal(db, orgId, number.value, pbxTemplatesOf(cfg));
  if (refused) return fail(`The calling policy refuses the destination: ${refused.message}`);

  const offered = calls.transfer ?? {};
  // Warm where the carrier offers only cold: the caller still reaches a person, without the whisper (docs/transfer.md).
  if (req.mode === "warm" && !offered.warm && offered.cold) record.mode = "cold";
  const ask = record.mode === "warm" ? offered.warm : offered.cold;
  if (!ask) return fail(`${cfg.provider.displayName} offers no ${req.mode} transfer`, "unsupported");
  const callId = run.providerCallId ?? (await campaignCallIds(env, [run])).get(run.id);
  if (!callId) return fail("The call is not known at its carrier yet");

  if (record.mode === "warm") {
    record.room = `edgedial-${run.id}-${crypto.randomUUID().slice(0, 8)}`;
    if (req.summaryAudio?.samples.length) {
      record.whisper_key = `transfers/run-${run.id}/${record.room}.wav`;
      await env.UPLOADS.put(record.whisper_key, wavFile(req.summaryAudio.samples, req.summaryAudio.rate), { httpMetadata: { contentType: "audio/wav" } });
    }
  }
  await saveTransfer(env, run.id, record);
  const leg = await legOf(env, run, record, callId);
  let result: Awaited<ReturnType<typeof ask>>;
  try {
    result = await ask(await loadConfigContext(env, cfg.row, cfg.numbers), providerEnvOf(env), leg);
  } catch (err) {
    log("error", "transfer_threw", { provider: cfg.provider.name, run_id: run.id, error: String(err) });
    result = { ok: false, message: `Could not transfer the call: ${(err as Error)?.message ?? String(err)}` };
  }
  if (!result.ok) return fail(result.message);
  // A cold transfer is done once the carrier took the caller, unless the carrier keeps them until the person answers (ari).
  if (record.mode === "cold" && !result.ringing) {
    await settleTransfer(env, run, record, "connected", null);
    return { state: "connected" };
  }
  await saveTransfer(env, run.id, { ...record, leg_id: result.legId ?? null });
  return { state: "ringing", timeoutSeconds: record.timeout_seconds };
}

/** A transfer still ringing given up by the session: the person's leg hung up (an ended leg is fine), the run says why. */
export async function giveUpTransfer(env: Env, orgId: number, runId: number, outcome: "no_answer" | "failed", message: string): Promise<void> {
  const run = await getOrgRun(getDb(env), orgId, runId);
  const t = run?.transfer as StoredTransfer | null | undefined;
  if (!run || !t || t.outcome) return;
  await settleTransfer(env, run, t, outcome, message);
  if (!t.leg_id || !run.telephonyConfigurationId) return;
  try {
    const cfg = await resolveTelephonyConfig(env, orgId, run.telephonyConfigurationId);
    await cfg.provider.calls?.hangup(await loadConfigContext(env, cfg.row, cfg.numbers), providerEnvOf(env), t.leg_id);
  } catch (err) {
    log("error", "transfer_leg_hangup_failed", { run_id: runId, error: String(err) });
  }
}
