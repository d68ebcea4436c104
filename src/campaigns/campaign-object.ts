// One Durable Object per campaign: owns its state machine, contacts, attempts, timers and logs (issue 6).
import { DurableObject } from "cloudflare:workers";

export class CampaignObject extends DurableObject<Env> {}
