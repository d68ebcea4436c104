// Mounts every feature router under /api/v1 and the API document.
import { createApp } from "./lib/app";
import { mountOpenApi } from "./lib/openapi";
import { campaignControlRouter } from "./campaigns/control.routes";
import { uploadsRouter } from "./uploads/uploads.routes";
import { greetingsRouter } from "./uploads/greetings.routes";
import { campaignRecordsRouter } from "./campaigns/records.routes";
import { campaignAppendRouter } from "./campaigns/append.routes";
import { healthRouter } from "./health/health.routes";
import { apiKeysRouter } from "./organizations/api-keys.routes";
import { limitApiRequests } from "./organizations/request-limit";
import { auditLogRouter } from "./organizations/audit-log.routes";
import { telephonyRouter } from "./telephony/configs.routes";
import { callingPolicyRouter } from "./telephony/calling-policy.routes";
import { suppressionsRouter } from "./telephony/suppressions.routes";
import { workflowsRouter } from "./workflows/workflows.routes";
import { callbacksRouter } from "./calls/callbacks.routes";
import { inboundRouter } from "./calls/inbound.routes";
import { exotelInboundRouter } from "./calls/exotel-inbound.routes";
import { resumeRouter } from "./calls/resume.routes";
import { transferRouter } from "./calls/transfer.routes";
import { runsRouter } from "./calls/runs.routes";
import { latencyRouter } from "./calls/latency.routes";
import { publicCallsRouter } from "./calls/public.routes";
import { webCallRouter } from "./calls/web-call.routes";
import { webhooksRouter } from "./webhooks/webhooks.routes";
import { dataPolicyRouter } from "./privacy/data-policy.routes";
import { erasureRouter } from "./privacy/erasure.routes";

export const app = createApp();
// After authentication (createApp), before any operation: API requests per key (429 `Rate limit exceeded`).
app.use("/api/v1/*", limitApiRequests);
// Order matters where paths overlap: earlier routers match first.
const ROUTERS = [
  healthRouter,
  apiKeysRouter,
  auditLogRouter,
  telephonyRouter,
  callingPolicyRouter,
  suppressionsRouter,
  dataPolicyRouter,
  erasureRouter,
  workflowsRouter,
  uploadsRouter,
  greetingsRouter,
  campaignRecordsRouter,
  campaignAppendRouter,
  callbacksRouter,
  inboundRouter,
  exotelInboundRouter,
  resumeRouter,
  transferRouter,
  runsRouter,
  latencyRouter,
  publicCallsRouter,
  webCallRouter,
  campaignControlRouter,
  webhooksRouter,
];
for (const router of ROUTERS) app.route("/api/v1", router);
mountOpenApi(app);
