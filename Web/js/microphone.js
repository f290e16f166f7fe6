// The microphone: opened ahead of time so a press starts capture within a frame. Capture is a gate
// on an always-running worklet; each capture has its own id (the "hold token"), so a stop always
// matches the start it belongs to, however quickly they follow each other.

import { sharedAudioContext } from "./audio-context.js";

/** Why the microphone could not be opened; shown to the person with a way out. */
export const MicrophoneProblem = Object.freeze({
  denied: "denied",
  missing: "missing",
  busy: "busy",
  insecure: "insecure",
  unsupported: "unsupported",
  failed: "failed",
});

/** Owns the microphone stream and the capture worklet. */
export class Microphone {
  /**
   * @param {{onAudio(id: number, samples: Int16Array): void, onLevel(rms: number, seconds: number): void,
   *          onStateChange(state: string, problem?: string, detail?: string): void}} handlers
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.state = "closed";
    this.problem = null;
    this.stream = null;
    this.node = null;
    this.nextCaptureId = 1;
    this.activeCaptureId = null;
    this.unconfirmedStops = new Map();
    this.level = 0;
    this.seconds = 0;
    this.context = null;
    this.startRequestedAt = new Map();
    /** Milliseconds from the last press until the worklet opened its gate (a diagnostic). */
    this.startLatencyMs = null;
    /** Milliseconds of audio after the last press that capture missed (0 when pre-roll covered it). */
    this.startMissedMs = null;
  }

  /** True from a capture's start until the worklet confirms it has stopped forwarding audio. */
  get capturing() {
    return this.activeCaptureId !== null || this.unconfirmedStops.size > 0;
  }

  /** Asks for the microphone (once) and starts the capture worklet with its gate closed. */
  async open() {
    if (this.state === "open" || this.state === "opening") return;
    this.setState("opening");
    if (!window.isSecureContext || !navigator.mediaDevices?.getUserMedia) {
      this.fail(window.isSecureContext ? MicrophoneProblem.unsupported : MicrophoneProblem.insecure);
      return;
    }
    try {
      const context = await sharedAudioContext();
      this.context = context;
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
      });
      const source = context.createMediaStreamSource(this.stream);
      this.node = new AudioWorkletNode(context, "parley-capture", { numberOfInputs: 1, numberOfOutputs: 0 });
      this.node.port.onmessage = (event) => this.receive(event.data);
      source.connect(this.node);
      for (const track of this.stream.getAudioTracks()) {
        track.addEventListener("ended", () => this.lost());
      }
      this.setState("open");
    } catch (error) {
      this.releaseStream();
      this.fail(classify(error), error?.message);
    }
  }

  /**
   * Opens the gate: audio from the press on is forwarded under the returned capture id (the
   * worklet forwards what it kept since the press first, so a late message loses nothing).
   * @param {number} requestedAt when the person pressed (an event timestamp)
   */
  startCapture(requestedAt = performance.now()) {
    if (this.state !== "open") return null;
    if (this.activeCaptureId !== null) this.stopCapture(this.activeCaptureId);
    const id = this.nextCaptureId;
    this.nextCaptureId += 1;
    this.activeCaptureId = id;
    this.startRequestedAt.set(id, requestedAt);
    const secondsSincePress = Math.max(0, (performance.now() - requestedAt) / 1000);
    const fromFrame = Math.round((this.context.currentTime - secondsSincePress) * this.context.sampleRate);
    this.node.port.postMessage({ type: "start", id, fromFrame });
    return id;
  }

  /**
   * Closes the gate for capture `id`. Every audio chunk of it is delivered before this resolves.
   * @returns {Promise<{samples: number}>} how many 24 kHz samples the capture forwarded
   */
  stopCapture(id) {
    if (this.activeCaptureId === id) this.activeCaptureId = null;
    const pending = this.unconfirmedStops.get(id);
    if (pending) return pending.promise;
    if (!this.node) return Promise.resolve({ samples: 0 });
    let resolve;
    const promise = new Promise((done) => { resolve = done; });
    this.unconfirmedStops.set(id, { promise, resolve });
    this.node.port.postMessage({ type: "stop", id });
    return promise;
  }

  receive(message) {
    switch (message.type) {
      case "audio":
        this.handlers.onAudio(message.id, message.samples);
        break;
      case "started":
        if (this.startRequestedAt.has(message.id)) {
          this.startLatencyMs = performance.now() - this.startRequestedAt.get(message.id);
          this.startMissedMs = message.missedMs;
          this.startRequestedAt.delete(message.id);
        }
        break;
      case "level":
        this.level = message.rms;
        this.seconds = message.seconds;
        this.handlers.onLevel(message.rms, message.seconds);
        break;
      case "stopped": {
        const pending = this.unconfirmedStops.get(message.id);
        this.unconfirmedStops.delete(message.id);
        pending?.resolve({ samples: message.samples });
        break;
      }
    }
  }

  lost() {
    if (this.state !== "open") return;
    this.close();
    this.fail(MicrophoneProblem.failed, "The microphone was disconnected.");
  }

  /** Stops the stream and the worklet; every pending stop resolves. */
  close() {
    this.node?.port.postMessage({ type: "close" });
    this.node?.disconnect();
    this.node = null;
    this.activeCaptureId = null;
    for (const pending of this.unconfirmedStops.values()) pending.resolve({ samples: 0 });
    this.unconfirmedStops.clear();
    this.releaseStream();
    this.setState("closed");
  }

  releaseStream() {
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
  }

  fail(problem, detail) {
    this.problem = problem;
    this.setState("failed", problem, detail);
  }

  setState(state, problem, detail) {
    this.state = state;
    if (state !== "failed") this.problem = null;
    this.handlers.onStateChange(state, problem, detail);
  }
}

function classify(error) {
  switch (error?.name) {
    case "NotAllowedError":
    case "SecurityError":
    case "PermissionDeniedError":
      return MicrophoneProblem.denied;
    case "NotFoundError":
    case "OverconstrainedError":
    case "DevicesNotFoundError":
      return MicrophoneProblem.missing;
    case "NotReadableError":
    case "TrackStartError":
    case "AbortError":
      return MicrophoneProblem.busy;
    default:
      return error?.message?.includes("AudioWorklet") ? MicrophoneProblem.unsupported : MicrophoneProblem.failed;
  }
}
