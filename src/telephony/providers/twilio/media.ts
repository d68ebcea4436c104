// Twilio Media Streams over <Connect><Stream>: μ-law 8 kHz in base64 JSON messages, camelCase.
import { twilioStyleMedia } from "../media-kit";

export const twilioMedia = twilioStyleMedia({ codec: "mulaw", rate: 8000 }, "camelCase");
