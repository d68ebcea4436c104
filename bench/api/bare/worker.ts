// The baseline: a bare Hono Worker answering GET /api/v1/health with the same small JSON as edgedial's health, minus
// its D1 check, so bench/api can compare edgedial's routes against the framework alone.
import { Hono } from "hono";

const app = new Hono();
app.get("/api/v1/health", (c) =>
  c.json({
    status: "ok",
    version: "0.1.0",
    backend_api_endpoint: new URL(c.req.url).origin,
    deployment_mode: "oss",
    auth_provider: "api_key",
    missing: [],
  }),
);

export default app;
