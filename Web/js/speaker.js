// Playback of the agent's speech through the playback worklet: a queue that stops at once and
// says how much of each item was heard.

import { sharedAudioContext } from "./audio-context.js";
import { WIRE_SAMPLE_RATE, base64ToFloat32 } from "./pcm.js";

/** Plays agent audio chunks in order and reports what was played. */
export class Speaker {
  /** @param {{onPlayingChange(playing: boolean): void}} handlers */
  constructor(handlers) {
    this.handlers = handlers;
    this.node = null;
    this.waiting = [];
    this.playing = false;
    this.queuedAhead = false;
    this.chunksReceived = 0;
    this.chunksPlayed = 0;
    this.samplesPlayed = 0;
    this.nextStopRequest = 1;
    this.pendingStops = new Map();
    this.failure = null;
    this.callPlaying = false;
    /** On a call: the response whose speech plays on the track, and how long it has played. */
    this.callResponseId = null;
    this.callPlayedMs = 0;
    this.callStartedAt = 0;
  }

  /** Creates the playback node on the shared context. */
  async prepare() {
    try {
      const context = await sharedAudioContext();
      this.node = new AudioWorkletNode(context, "parley-playback", {
        numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1],
      });
      this.node.port.onmessage = (event) => this.receive(event.data);
      this.node.connect(context.destination);
      for (const message of this.waiting) this.post(message);
      this.waiting = [];
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /**
   * On a WebRTC call the speech plays from the call's track and the server says when it starts
   * and stops (`output_audio_buffer.*`); `stop()` then asks the server to clear it.
   * @param {boolean} playing
   * @param {string|null} responseId the response whose speech starts playing
   */
  callOutput(playing, responseId = null) {
    const now = performance.now();
    if (playing && !this.callPlaying) {
      if (responseId !== this.callResponseId) this.callPlayedMs = 0;
      this.callResponseId = responseId;
      this.callStartedAt = now;
    } else if (!playing && this.callPlaying) {
      this.callPlayedMs += now - this.callStartedAt;
    }
    this.callPlaying = playing;
    this.setPlaying(playing);
  }

  /** True while audio is playing or queued to play. */
  get busy() {
    return this.playing || this.queuedAhead;
  }

  /**
   * Queues one base64 pcm16 chunk of `itemId`.
   * @returns {number|null} the chunk's sample count, or null when it is not valid pcm16 base64
   */
  enqueue(itemId, base64) {
    const samples = base64ToFloat32(base64);
    if (!samples) return null;
    this.chunksReceived += 1;
    const count = samples.length;
    if (count === 0) return 0;
    this.queuedAhead = true;
    this.post({ type: "enqueue", itemId, samples }, [samples.buffer]);
    return count;
  }

  /**
   * Stops playback at once and empties the queue. On a call the result names the response
   * (`responseId`) instead of the item, with how long its speech played on the track.
   * @returns {Promise<{wasPlaying: boolean, itemId: string|null, playedMs: number, responseId?: string|null}>}
   */
  stop() {
    this.queuedAhead = false;
    if (this.callPlaying) {
      this.callOutput(false);
      this.handlers.onCallStop?.();
      // The server cuts the item to what it sent and says so (`conversation.item.truncated`).
      return Promise.resolve({
        wasPlaying: true, itemId: null, playedMs: Math.floor(this.callPlayedMs), responseId: this.callResponseId,
      });
    }
    if (!this.node) {
      this.waiting = [];
      return Promise.resolve({ wasPlaying: false, itemId: null, playedMs: 0 });
    }
    const requestId = this.nextStopRequest;
    this.nextStopRequest += 1;
    return new Promise((resolve) => {
      this.pendingStops.set(requestId, resolve);
      this.node.port.postMessage({ type: "stop", requestId });
    });
  }

  /** Holds playback where it is (speech over the agent that may interrupt it). */
  pause() {
    this.post({ type: "pause" });
  }

  /** Plays on from where `pause()` held it. */
  resume() {
    this.post({ type: "resume" });
  }

  post(message, transfer = []) {
    if (this.node) this.node.port.postMessage(message, transfer);
    else if (!this.failure) this.waiting.push(message);
  }

  receive(message) {
    switch (message.type) {
      case "started":
        this.setPlaying(true);
        break;
      case "progress":
        this.count(message);
        break;
      case "drained":
        this.queuedAhead = false;
        this.setPlaying(false);
        break;
      case "stopped": {
        this.count(message);
        this.setPlaying(false);
        const resolve = this.pendingStops.get(message.requestId);
        this.pendingStops.delete(message.requestId);
        resolve?.({
          wasPlaying: message.wasPlaying,
          itemId: message.itemId,
          playedMs: Math.floor((message.playedSamples * 1000) / WIRE_SAMPLE_RATE),
        });
        break;
      }
    }
  }

  count(message) {
    this.chunksPlayed = message.chunksPlayed;
    this.samplesPlayed = message.totalSamples;
  }

  setPlaying(playing) {
    if (this.playing === playing) return;
    this.playing = playing;
    this.handlers.onPlayingChange(playing);
  }
}
