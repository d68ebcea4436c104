// Hono environment shared by every router: the Worker bindings plus per-request values set by middleware.
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    orgId: number;
    apiKeyId: number;
  };
};
