// Cloudonix CXML <Connect><Stream>: documented as a bidirectional WebSocket audio connection; CXML follows TwiML,
// and its stream is read here as Twilio's protocol (μ-law 8 kHz, the same messages).
import { TWILIO_KEYS, twilioStyleMedia } from "../media-kit";

export const cloudonixMedia = twilioStyleMedia({ codec: "mulaw", rate: 8000 }, TWILIO_KEYS);
