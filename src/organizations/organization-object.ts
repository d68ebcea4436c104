// One Durable Object per organization: leases on the organization's concurrent-call cap (issues 6 and 7).
import { DurableObject } from "cloudflare:workers";

export class OrganizationObject extends DurableObject<Env> {}
