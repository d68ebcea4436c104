// Exotel Voicebot streams: Twilio's message set in snake_case, carrying 16-bit little-endian linear PCM ("raw/slin")
// at 8 kHz in base64.
import { twilioStyleMedia } from "../media-kit";

export const exotelMedia = twilioStyleMedia(
  { codec: "pcm16", rate: 8000 },
  { stream: "stream_sid", call: "call_sid", media: "media_format", rate: "sample_rate", streamInReplies: true },
);
