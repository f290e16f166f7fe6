// Builders for the client events of the OpenAI Realtime protocol (GA shapes) that the page sends.

import { WIRE_SAMPLE_RATE, pcm16ToBase64 } from "./pcm.js";

const PCM_FORMAT = Object.freeze({ type: "audio/pcm", rate: WIRE_SAMPLE_RATE });

/**
 * Hands-free turns: the server's turn model judges each pause, so a pause mid-sentence is not
 * taken for the end; the server answers and lets the person barge in.
 */
export const SEMANTIC_TURN_DETECTION = Object.freeze({
  type: "semantic_vad",
  eagerness: "auto",
  create_response: true,
  interrupt_response: true,
});

/** Hands-free turns on a server without a turn model: a silence window ends the turn. */
export const HANDS_FREE_TURN_DETECTION = Object.freeze({
  type: "server_vad",
  threshold: 0.5,
  prefix_padding_ms: 300,
  silence_duration_ms: 500,
  create_response: true,
  interrupt_response: true,
});

/**
 * Configures pcm16 24 kHz both ways and the turn detection of the current mode: none for
 * hold-to-talk; hands-free with `semantic_vad` unless `semantic` is false.
 */
export function sessionUpdate({ handsFree, semantic = true }) {
  const handsFreeTurns = semantic ? SEMANTIC_TURN_DETECTION : HANDS_FREE_TURN_DETECTION;
  return {
    type: "session.update",
    session: {
      type: "realtime",
      audio: {
        input: { format: PCM_FORMAT, turn_detection: handsFree ? handsFreeTurns : null },
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
