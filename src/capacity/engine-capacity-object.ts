// The deployment's engine capacity: one Durable Object for the whole deployment (engine quotas such as Workers AI's
// requests per minute are per account, shared by every organization), so admission can count what calls need.
import { DurableObject } from "cloudflare:workers";

export class EngineCapacityObject extends DurableObject<Env> {}
