// Twilio Media Streams over <Connect><Stream>: μ-law 8 kHz in base64 JSON messages.
import { TWILIO_KEYS, twilioStyleMedia } from "../media-kit";

export const twilioMedia = twilioStyleMedia({ codec: "mulaw", rate: 8000 }, TWILIO_KEYS);
