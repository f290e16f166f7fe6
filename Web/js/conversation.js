// The conversation: turns (hold-to-talk, hands-free, typed), interruptions, and every server event
// mapped onto the thread, the orb and the speaker.

import * as client from "./realtime-events.js";
import { WIRE_SAMPLE_RATE } from "./pcm.js";

/** A hold shorter than this (or with less audio) is a tap: cleared, never sent. */
export const MINIMUM_UTTERANCE_MS = 150;
/** On a call, how long after a release the commit waits for the turn's last packets. */
const CALL_TAIL_MS = 120;

/** Runs the turns of one person with the agent across realtime sessions. */
export class Conversation {
  /**
   * @param {object} parts connection, microphone, speaker, thread, orb, and `view` with
   *   render(), microphoneUnavailable(), notConnected(), quickTap(), handsFreeChanged(on)
   */
  constructor({ connection, microphone, speaker, thread, orb, view }) {
    Object.assign(this, { connection, microphone, speaker, thread, orb, view });
    this.handsFree = false;
    // Whether hands-free asks for semantic_vad: until the server says it has no turn model.
    this.semanticTurns = true;
    // The turn detection the server last confirmed (`session.updated`): its type, or null.
    this.turnDetection = null;
    this.hold = null;
    this.holdTranscript = "";
    this.streamCaptureId = null;
    this.sendableCaptures = new Set();
    this.userSpeaking = false;
    this.speechItemId = null;
    this.awaitingResponse = false;
    this.discardNextResponse = false;
    this.activeResponseId = null;
    this.discardedResponses = new Set();
    this.responseItems = new Map();
    this.itemResponses = new Map();
    this.audioMarks = new Map();
    this.partialTranscripts = new Map();
    this.finalTranscripts = new Map();
    this.pendingVoiceKeys = [];
    this.pendingTyped = [];
    this.truncatedItems = new Set();
    this.nextLocalKey = 1;
    this.sessionId = null;
    this.eventCounts = {};
    this.chunksSent = 0;
    this.lastTruncate = null;
    this.lastError = null;
    this.lastTurnMetrics = null;
  }

  /** The status word for a connected page: listening, speaking, thinking or ready. */
  get activity() {
    if (this.hold || (this.handsFree && this.userSpeaking)) return "listening";
    if (this.speaker.playing) return "speaking";
    if (this.activeResponseId || this.awaitingResponse || this.speaker.busy) return "thinking";
    return "ready";
  }

  // MARK: - Hold to talk

  /**
   * Pointer down or space down on the talk button: capture starts now (the gate opens).
   * @param {string} source which pointer or key holds; only its release ends the hold
   * @param {number} pressedAt the input event's timestamp, to measure how fast capture started
   */
  pressTalk(source, pressedAt = performance.now()) {
    if (this.hold) return;
    if (this.handsFree) {
      this.interrupt("button");
      return;
    }
    if (this.microphone.state !== "open") {
      this.view.microphoneUnavailable();
      return;
    }
    if (!this.connection.isOpen) {
      this.view.notConnected();
      return;
    }
    const captureId = this.microphone.startCapture(pressedAt);
    if (captureId === null) return;
    this.sendableCaptures.add(captureId);
    if (this.connection.carriesAudio) {
      // A call's track carried silence until now: the turn starts here.
      this.connection.send(client.clearAudio());
      this.connection.setMicrophoneOpen(true);
    }
    this.hold = { captureId, source, startedAt: performance.now() };
    this.holdTranscript = "";
    this.orb.show();
    this.interrupt("hold");
    this.view.render();
  }

  /** Release: commit and ask for the answer, or clear silently when it was only a tap. */
  async releaseTalk(source) {
    const hold = this.endHold(source);
    if (!hold) return;
    const heldMs = performance.now() - hold.startedAt;
    // The microphone closes on the release itself, whichever way its audio travels.
    const onCall = this.connection.carriesAudio;
    this.connection.setMicrophoneOpen(false);
    const { samples } = await this.microphone.stopCapture(hold.captureId);
    this.sendableCaptures.delete(hold.captureId);
    const capturedMs = (samples * 1000) / WIRE_SAMPLE_RATE;
    if (heldMs < MINIMUM_UTTERANCE_MS || capturedMs < MINIMUM_UTTERANCE_MS) {
      this.connection.send(client.clearAudio());
      this.view.quickTap();
      this.view.render();
      return;
    }
    // On a call the turn's last packets reach the server before the commit does.
    if (onCall) await new Promise((resolve) => setTimeout(resolve, CALL_TAIL_MS));
    if (!this.connection.send(client.commitAudio())) return;
    this.connection.send(client.createResponse());
    this.awaitingResponse = true;
    const key = this.localKey("voice");
    this.thread.addUser(key, this.holdTranscript);
    this.pendingVoiceKeys.push(key);
    this.view.render();
  }

  /** Pointer cancel, blur, hidden page: stop capturing and throw the audio away. */
  async abandonTalk() {
    const hold = this.endHold(null);
    if (!hold) return;
    this.connection.setMicrophoneOpen(false);
    await this.microphone.stopCapture(hold.captureId);
    this.sendableCaptures.delete(hold.captureId);
    this.connection.send(client.clearAudio());
    this.view.render();
  }

  endHold(source) {
    const hold = this.hold;
    if (!hold || (source && hold.source !== source)) return null;
    this.hold = null;
    this.orb.hide();
    this.view.render();
    return hold;
  }

  // MARK: - Hands-free

  /** Switches between hold-to-talk and hands-free (turns detected by the server, with barge-in). */
  async setHandsFree(on) {
    if (on === this.handsFree) return;
    if (on && this.microphone.state !== "open") {
      this.view.microphoneUnavailable();
      return;
    }
    if (this.hold) await this.abandonTalk();
    this.handsFree = on;
    this.connection.setMicrophoneOpen(on);
    this.view.handsFreeChanged(on);
    this.sendSessionUpdate();
    if (on) {
      this.startStreaming();
    } else {
      const captureId = this.streamCaptureId;
      this.streamCaptureId = null;
      this.userSpeaking = false;
      this.orb.hide();
      if (captureId !== null) {
        await this.microphone.stopCapture(captureId);
        this.sendableCaptures.delete(captureId);
      }
      this.connection.send(client.clearAudio());
    }
    this.view.render();
  }

  startStreaming() {
    const captureId = this.microphone.startCapture();
    if (captureId === null) return;
    this.streamCaptureId = captureId;
    this.sendableCaptures.add(captureId);
  }

  sendSessionUpdate() {
    this.connection.send(client.sessionUpdate({ handsFree: this.handsFree, semantic: this.semanticTurns }));
  }

  /** The microphone stopped working: hands-free cannot go on. */
  microphoneLost() {
    if (this.hold) this.abandonTalk();
    if (this.handsFree) this.setHandsFree(false);
  }

  /** A chunk of microphone audio from capture `captureId`. */
  microphoneAudio(captureId, samples) {
    if (!this.sendableCaptures.has(captureId) || this.connection.carriesAudio) return;
    if (this.connection.send(client.appendAudio(samples))) this.chunksSent += 1;
  }

  // MARK: - Typing

  /**
   * Sends a typed message; its answer is spoken like any other.
   * @returns {boolean} false when not connected (the text stays in the composer)
   */
  sendText(text) {
    if (!this.connection.isOpen) {
      this.view.notConnected();
      return false;
    }
    this.interrupt("typed");
    this.connection.send(client.userText(text));
    this.connection.send(client.createResponse());
    this.awaitingResponse = true;
    const key = this.localKey("typed");
    this.thread.addUser(key, text, { done: true });
    this.pendingTyped.push({ key, text });
    this.view.render();
    return true;
  }

  // MARK: - Interruption

  /**
   * Stops the agent: cancels its response (unless the server already did, on barge-in), stops
   * playback at once and truncates the item to what was played.
   */
  async interrupt(reason) {
    const responseId = this.activeResponseId;
    const speaking = this.speaker.busy;
    if (!responseId && !this.awaitingResponse && !speaking) return;
    const serverCancels = reason === "vad";
    if (responseId) {
      this.discardedResponses.add(responseId);
      if (!serverCancels) this.connection.send(client.cancelResponse());
    } else if (this.awaitingResponse && !serverCancels) {
      this.discardNextResponse = true;
      this.connection.send(client.cancelResponse());
    }
    this.awaitingResponse = false;
    if (speaking) {
      const stopped = await this.speaker.stop();
      if (stopped.responseId) {
        this.callSpeechInterrupted(stopped, reason);
      } else if (stopped.itemId && this.itemResponses.has(stopped.itemId)) {
        this.discardedResponses.add(this.itemResponses.get(stopped.itemId));
        this.truncatedItems.add(stopped.itemId);
        this.lastTruncate = { itemId: stopped.itemId, audioEndMs: stopped.playedMs, reason };
        this.connection.send(client.truncateItem(stopped.itemId, stopped.playedMs));
        this.thread.interrupt(stopped.itemId, this.heardTextLength(stopped.itemId, stopped.playedMs));
      }
    }
    for (const itemId of this.responseItems.get(responseId) ?? []) {
      if (!this.thread.isInterrupted(itemId)) {
        this.thread.interrupt(itemId, this.heardTextLength(itemId, 0));
      }
    }
    this.view.render();
  }

  /**
   * A call's speech was stopped: the server cuts the item to what it sent (and says so with
   * `conversation.item.truncated`), so the page only records the cut and shows it.
   */
  callSpeechInterrupted(stopped, reason) {
    this.discardedResponses.add(stopped.responseId);
    const itemId = (this.responseItems.get(stopped.responseId) ?? []).at(-1);
    if (!itemId) return;
    this.lastTruncate = { itemId, audioEndMs: stopped.playedMs, reason };
    if (!this.thread.isInterrupted(itemId)) {
      this.thread.interrupt(itemId, this.heardTextLength(itemId, stopped.playedMs));
    }
  }

  /** How much of an item's text had arrived when the audio at `playedMs` arrived. */
  heardTextLength(itemId, playedMs) {
    const marks = this.audioMarks.get(itemId);
    if (!marks || marks.chunks.length === 0) return undefined;
    const playedSamples = (playedMs * WIRE_SAMPLE_RATE) / 1000;
    if (playedSamples <= 0) return 0;
    let length = 0;
    for (const chunk of marks.chunks) {
      if (chunk.startSample >= playedSamples) break;
      length = chunk.textLength;
    }
    return length;
  }

  // MARK: - Sessions

  /** A realtime session opened (first or after a reconnect). */
  sessionOpened() {
    this.resetSessionState();
    this.connection.setMicrophoneOpen(this.handsFree || this.hold !== null);
    this.sendSessionUpdate();
    this.view.render();
  }

  /** The realtime session was lost: what was streaming or playing is cut where it stood. */
  async sessionLost() {
    if (this.hold) this.abandonTalk();
    this.userSpeaking = false;
    this.orb.hide();
    const stopped = await this.speaker.stop();
    if (stopped.wasPlaying && stopped.itemId && !this.thread.isInterrupted(stopped.itemId)) {
      this.thread.interrupt(stopped.itemId, this.heardTextLength(stopped.itemId, stopped.playedMs));
    }
    for (const key of this.thread.streamingAgents()) {
      this.thread.interrupt(key, this.heardTextLength(key, 0));
    }
    for (const key of this.pendingVoiceKeys) this.thread.finishUser(key, this.thread.text(key));
    this.resetSessionState();
    this.view.render();
  }

  resetSessionState() {
    this.activeResponseId = null;
    this.awaitingResponse = false;
    this.discardNextResponse = false;
    this.userSpeaking = false;
    this.speechItemId = null;
    this.partialTranscripts.clear();
    this.finalTranscripts.clear();
    this.pendingVoiceKeys = [];
    this.pendingTyped = [];
    this.discardedResponses.clear();
    this.responseItems.clear();
    this.itemResponses.clear();
    this.audioMarks.clear();
    this.truncatedItems.clear();
  }

  // MARK: - Server events

  /** Applies one server event. */
  handle(event) {
    this.eventCounts[event.type] = (this.eventCounts[event.type] ?? 0) + 1;
    const handler = SERVER_EVENT_HANDLERS[event.type];
    if (handler) handler.call(this, event);
    this.view.render();
  }

  sessionCreated(event) {
    this.sessionId = event.session?.id ?? null;
  }

  sessionUpdated(event) {
    this.turnDetection = event.session?.audio?.input?.turn_detection?.type ?? null;
  }

  speechStarted(event) {
    this.userSpeaking = true;
    this.speechItemId = event.item_id ?? null;
    if (!this.handsFree) return;
    this.orb.show();
    if (this.speaker.busy) this.interrupt("vad");
  }

  /** The server heard speech over the agent that may interrupt it: hold the agent's audio. */
  outputAudioPaused() {
    if (this.handsFree) this.speaker.pause();
  }

  /** The speech over the agent was a backchannel or a noise: the agent goes on. */
  outputAudioResumed() {
    this.speaker.resume();
  }

  speechStopped() {
    this.userSpeaking = false;
    if (!this.hold) this.orb.hide();
  }

  inputCommitted(event) {
    const itemId = event.item_id;
    if (!itemId || this.thread.has(itemId)) return;
    const key = this.pendingVoiceKeys.shift();
    if (key) this.thread.rekey(key, itemId);
    else this.thread.addUser(itemId, "");
    if (this.handsFree && !key) this.awaitingResponse = true;
    this.applyKnownTranscript(itemId);
  }

  itemAdded(event) {
    const item = event.item;
    if (!item || item.type !== "message" || item.role !== "user" || !item.id) return;
    if (this.thread.has(item.id)) return;
    const typed = (item.content ?? []).find((part) => part.type === "input_text");
    if (typed) {
      const index = this.pendingTyped.findIndex((pending) => pending.text === typed.text);
      if (index >= 0) {
        this.thread.rekey(this.pendingTyped[index].key, item.id);
        this.pendingTyped.splice(index, 1);
      } else {
        this.thread.addUser(item.id, typed.text ?? "", { done: true });
      }
      return;
    }
    const key = this.pendingVoiceKeys.shift();
    if (key) this.thread.rekey(key, item.id);
    else this.thread.addUser(item.id, "");
    this.applyKnownTranscript(item.id);
  }

  itemDone(event) {
    const item = event.item;
    if (!item?.id || item.role !== "assistant" || !this.thread.isInterrupted(item.id)) return;
    const part = (item.content ?? []).find((content) => typeof (content.transcript ?? content.text) === "string");
    const heard = part ? (part.transcript ?? part.text) : null;
    if (heard !== null && this.thread.fullAgentText(item.id).startsWith(heard)) {
      this.thread.interrupt(item.id, heard.length);
    }
  }

  applyKnownTranscript(itemId) {
    if (this.finalTranscripts.has(itemId)) {
      this.thread.finishUser(itemId, this.finalTranscripts.get(itemId));
      this.finalTranscripts.delete(itemId);
    } else if (this.partialTranscripts.has(itemId)) {
      this.thread.setUserText(itemId, this.partialTranscripts.get(itemId));
    }
  }

  // The standard delta appends to the transcript so far.
  transcriptionDelta(event) {
    const itemId = event.item_id;
    const sofar = (itemId && this.partialTranscripts.get(itemId)) || "";
    this.showPartialTranscript(itemId, sofar + String(event.delta ?? ""));
  }

  // Parley's partial transcript replaces the text so far (a re-decode may revise words).
  partialTranscript(event) {
    this.showPartialTranscript(event.item_id, String(event.text ?? ""));
  }

  showPartialTranscript(itemId, text) {
    if (itemId) this.partialTranscripts.set(itemId, text);
    const isCurrentSpeech = this.hold || (this.handsFree && this.userSpeaking && itemId === this.speechItemId);
    if (isCurrentSpeech) {
      this.holdTranscript = text;
      this.orb.setCaption(text);
    }
    if (itemId && this.thread.has(itemId)) this.thread.setUserText(itemId, text);
  }

  transcriptionCompleted(event) {
    const itemId = event.item_id;
    const text = String(event.transcript ?? "");
    if (!itemId) return;
    this.partialTranscripts.delete(itemId);
    if (this.thread.has(itemId)) this.thread.finishUser(itemId, text);
    else this.finalTranscripts.set(itemId, text);
  }

  transcriptionFailed(event) {
    const itemId = event.item_id;
    if (itemId && this.thread.has(itemId)) this.thread.finishUser(itemId, "", "(could not transcribe)");
    this.showError(event.error, "Transcribing what you said failed");
  }

  responseCreated(event) {
    const responseId = event.response?.id;
    if (!responseId) return;
    this.activeResponseId = responseId;
    this.awaitingResponse = false;
    if (this.discardNextResponse) {
      this.discardNextResponse = false;
      this.discardedResponses.add(responseId);
    }
  }

  outputItemAdded(event) {
    const item = event.item;
    const responseId = event.response_id;
    if (!item?.id || this.discardedResponses.has(responseId)) return;
    if (item.type !== "message" || (item.role && item.role !== "assistant")) return;
    this.thread.addAgent(item.id);
    this.itemResponses.set(item.id, responseId);
    const items = this.responseItems.get(responseId) ?? [];
    items.push(item.id);
    this.responseItems.set(responseId, items);
  }

  agentTextDelta(event) {
    if (this.discardedResponses.has(event.response_id)) return;
    this.ensureAgent(event);
    this.thread.appendAgent(event.item_id, String(event.delta ?? ""));
  }

  agentTextDone(event) {
    if (this.discardedResponses.has(event.response_id)) return;
    const text = event.transcript ?? event.text;
    if (typeof text === "string" && text !== "") this.thread.setAgentText(event.item_id, text);
  }

  agentAudioDelta(event) {
    if (this.discardedResponses.has(event.response_id) || !event.item_id) return;
    this.ensureAgent(event);
    const samples = this.speaker.enqueue(event.item_id, String(event.delta ?? ""));
    if (samples === null) {
      this.thread.addNotice("The server sent audio the page could not decode; it was skipped.", "error");
      return;
    }
    const marks = this.audioMarks.get(event.item_id) ?? { samples: 0, chunks: [] };
    marks.chunks.push({ startSample: marks.samples, textLength: this.thread.text(event.item_id).length });
    marks.samples += samples;
    this.audioMarks.set(event.item_id, marks);
  }

  /** Agent output for an item announced without `response.output_item.added` still gets a bubble. */
  ensureAgent(event) {
    if (!event.item_id || this.thread.has(event.item_id)) return;
    this.outputItemAdded({ response_id: event.response_id, item: { id: event.item_id, type: "message" } });
  }

  outputItemDone(event) {
    const item = event.item;
    if (!item?.id) return;
    if (this.thread.isInterrupted(item.id)) this.itemDone(event);
    else if (!this.discardedResponses.has(event.response_id)) this.thread.finish(item.id);
  }

  responseDone(event) {
    const response = event.response ?? {};
    if (response.id === this.activeResponseId) this.activeResponseId = null;
    const status = response.status;
    for (const itemId of this.responseItems.get(response.id) ?? []) {
      if (status === "cancelled" && !this.thread.isInterrupted(itemId) && !this.speaker.busy) {
        this.thread.interrupt(itemId, this.heardTextLength(itemId, 0));
      } else {
        this.thread.finish(itemId);
      }
    }
    if (status === "failed") {
      this.showError(response.status_details?.error, "The agent could not answer");
    } else if (status === "incomplete") {
      const reason = response.status_details?.reason;
      this.thread.addNotice(`The answer was cut short${reason ? ` (${reason.replaceAll("_", " ")})` : ""}.`, "warning");
    }
  }

  itemTruncated(event) {
    const itemId = event.item_id;
    if (!itemId || this.truncatedItems.has(itemId)) return;
    this.truncatedItems.add(itemId);
    this.discardedResponses.add(this.itemResponses.get(itemId));
    this.speaker.stop().then(() => {
      this.thread.interrupt(itemId, this.heardTextLength(itemId, Number(event.audio_end_ms) || 0));
      this.view.render();
    });
  }

  // A call's speech, as the server plays it out on the track. A start that crossed an
  // interruption on the way belongs to an answer already stopped: it stays silent.
  callOutputStarted(event) {
    if (this.discardedResponses.has(event.response_id)) return;
    this.speaker.callOutput(true, event.response_id ?? null);
  }

  callOutputStopped() {
    this.speaker.callOutput(false);
  }

  toolCallStarted(event) {
    this.thread.addToolLine(event.call_id, event.name);
  }

  toolCallFinished(event) {
    this.thread.finishToolLine(event.call_id, Boolean(event.is_error));
  }

  turnMetrics(event) {
    this.lastTurnMetrics = event;
  }

  serverError(event) {
    const error = event.error ?? {};
    const about = this.connection.sentEventType(error.event_id);
    if (about === "response.cancel" && !this.activeResponseId) return;
    if (about === "session.update" && error.param === "session.turn_detection.type" && this.semanticTurns) {
      // The server has no turn model: hands-free ends turns on silence instead.
      this.semanticTurns = false;
      this.sendSessionUpdate();
      return;
    }
    if (about === "input_audio_buffer.commit" || about === "response.create") this.awaitingResponse = false;
    if (about === "input_audio_buffer.commit" && this.pendingVoiceKeys.length > 0) {
      this.thread.finishUser(this.pendingVoiceKeys.pop(), "", "(not sent)");
    }
    this.showError(error, "The server reported an error", about);
  }

  unreadable(event) {
    this.thread.addNotice(`The server sent a message the page could not read (${event.reason}).`, "error");
  }

  showError(error, fallback, about) {
    const message = typeof error?.message === "string" && error.message.trim() !== "" ? error.message.trim() : fallback;
    this.lastError = { code: error?.code ?? null, message, about: about ?? null };
    this.thread.addNotice(about ? `${message} (in reply to ${about})` : message, "error");
  }

  localKey(kind) {
    const key = `local-${kind}-${this.nextLocalKey}`;
    this.nextLocalKey += 1;
    return key;
  }
}

const SERVER_EVENT_HANDLERS = Object.freeze({
  "session.created": Conversation.prototype.sessionCreated,
  "session.updated": Conversation.prototype.sessionUpdated,
  "input_audio_buffer.speech_started": Conversation.prototype.speechStarted,
  "input_audio_buffer.speech_stopped": Conversation.prototype.speechStopped,
  "parley.output_audio.paused": Conversation.prototype.outputAudioPaused,
  "parley.output_audio.resumed": Conversation.prototype.outputAudioResumed,
  "input_audio_buffer.committed": Conversation.prototype.inputCommitted,
  "conversation.item.added": Conversation.prototype.itemAdded,
  "conversation.item.created": Conversation.prototype.itemAdded,
  "conversation.item.done": Conversation.prototype.itemDone,
  "conversation.item.input_audio_transcription.delta": Conversation.prototype.transcriptionDelta,
  "parley.input_transcript.partial": Conversation.prototype.partialTranscript,
  "conversation.item.input_audio_transcription.completed": Conversation.prototype.transcriptionCompleted,
  "conversation.item.input_audio_transcription.failed": Conversation.prototype.transcriptionFailed,
  "conversation.item.truncated": Conversation.prototype.itemTruncated,
  "response.created": Conversation.prototype.responseCreated,
  "response.output_item.added": Conversation.prototype.outputItemAdded,
  "response.output_audio_transcript.delta": Conversation.prototype.agentTextDelta,
  "response.output_text.delta": Conversation.prototype.agentTextDelta,
  "response.output_audio_transcript.done": Conversation.prototype.agentTextDone,
  "response.output_text.done": Conversation.prototype.agentTextDone,
  "response.output_audio.delta": Conversation.prototype.agentAudioDelta,
  "response.output_item.done": Conversation.prototype.outputItemDone,
  "response.done": Conversation.prototype.responseDone,
  "output_audio_buffer.started": Conversation.prototype.callOutputStarted,
  "output_audio_buffer.stopped": Conversation.prototype.callOutputStopped,
  "output_audio_buffer.cleared": Conversation.prototype.callOutputStopped,
  "parley.tool_call.started": Conversation.prototype.toolCallStarted,
  "parley.tool_call.finished": Conversation.prototype.toolCallFinished,
  "parley.turn_metrics": Conversation.prototype.turnMetrics,
  "parley.web.unreadable": Conversation.prototype.unreadable,
  error: Conversation.prototype.serverError,
});
