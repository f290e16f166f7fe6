// Builders for the client events of the OpenAI Realtime protocol (GA shapes) that the page sends.

import { WIRE_SAMPLE_RATE, pcm16ToBase64 } from "./pcm.js";

const PCM_FORMAT = Object.freeze({ type: "audio/pcm", rate: WIRE_SAMPLE_RATE });

/** Server VAD settings for hands-free turns; the server answers and lets the person barge in. */
export const HANDS_FREE_TURN_DETECTION = Object.freeze({
  type: "server_vad",
  threshold: 0.5,
  prefix_padding_ms: 300,
  silence_duration_ms: 500,
  create_response: true,
  interrupt_response: true,
});

/** Configures pcm16 24 kHz both ways and the turn detection of the current mode. */
export function sessionUpdate({ handsFree }) {
  return {
    type: "session.update",
    session: {
      type: "realtime",
      audio: {
        input: { format: PCM_FORMAT, turn_detection: handsFree ? HANDS_FREE_TURN_DETECTION : null },
        output: { format: PCM_FORMAT },
      },
    },
  };
}

/** Appends microphone audio to the input buffer. */
export function appendAudio(samples) {
  return { type: "input_audio_buffer.append", audio: pcm16ToBase64(samples) };
}

/** Commits the input buffer as a user message. */
export function commitAudio() {
  return { type: "input_audio_buffer.commit" };
}

/** Discards the input buffer. */
export function clearAudio() {
  return { type: "input_audio_buffer.clear" };
}

/** Adds a typed user message to the conversation. */
export function userText(text) {
  return {
    type: "conversation.item.create",
    item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
  };
}

/** Asks for the agent's answer. */
export function createResponse() {
  return { type: "response.create" };
}

/** Cancels the response in progress. */
export function cancelResponse() {
  return { type: "response.cancel" };
}

/** Cuts an assistant item's audio (and stored text) to what the listener heard. */
export function truncateItem(itemId, audioEndMs) {
  return { type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: audioEndMs };
}
