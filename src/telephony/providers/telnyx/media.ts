// Telnyx media streaming (bidirectional, RTP mode, PCMU): Twilio's message set with stream_id and call_control_id;
// what we send names no stream (the socket is the stream).
import { twilioStyleMedia } from "../media-kit";

export const telnyxMedia = twilioStyleMedia(
  { codec: "mulaw", rate: 8000 },
  { stream: "stream_id", call: "call_control_id", media: "media_format", rate: "sample_rate", streamInReplies: false },
);
