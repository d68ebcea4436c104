// Mounts every feature router under /api/v1 and the API document.
import { createApp } from "./lib/app";
import { mountOpenApi } from "./lib/openapi";
import { campaignControlRouter } from "./campaigns/control.routes";
import { uploadsRouter } from "./uploads/uploads.routes";
import { campaignRecordsRouter } from "./campaigns/records.routes";
import { healthRouter } from "./health/health.routes";
import { apiKeysRouter } from "./organizations/api-keys.routes";
import { limitApiRequests } from "./organizations/request-limit";
import { auditLogRouter } from "./organizations/audit-log.routes";
import { telephonyRouter } from "./telephony/configs.routes";
import { callingPolicyRouter } from "./telephony/calling-policy.routes";
import { workflowsRouter } from "./workflows/workflows.routes";
import { callbacksRouter } from "./calls/callbacks.routes";
import { runsRouter } from "./calls/runs.routes";
import { publicCallsRouter } from "./calls/public.routes";

export const app = createApp();
// After authentication (createApp), before any operation: API requests per key (429 `Rate limit exceeded`).
app.use("/api/v1/*", limitApiRequests);
app.route("/api/v1", healthRouter);
app.route("/api/v1", apiKeysRouter);
app.route("/api/v1", auditLogRouter);
app.route("/api/v1", telephonyRouter);
app.route("/api/v1", callingPolicyRouter);
app.route("/api/v1", workflowsRouter);
app.route("/api/v1", uploadsRouter);
app.route("/api/v1", campaignRecordsRouter);
app.route("/api/v1", callbacksRouter);
app.route("/api/v1", runsRouter);
app.route("/api/v1", publicCallsRouter);
app.route("/api/v1", campaignControlRouter);
mountOpenApi(app);
