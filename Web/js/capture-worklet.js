// AudioWorklet processor for the microphone. It always measures the level and keeps the last
// 200 ms; it forwards audio only between a "start" and a "stop" message (capture is gated, never
// started on press), converted to 24 kHz pcm16 in 40 ms chunks. A start names the context frame of
// the press, and the kept audio since then is forwarded first, so however late the message
// arrives, capture begins at the press.

import { StreamingResampler } from "./resampler.js";

const WIRE_RATE = 24000;
const CHUNK_SAMPLES = WIRE_RATE / 25;
const LEVEL_INTERVAL_FRAMES = Math.round(sampleRate / 20);
const RECENT_FRAMES = Math.round(sampleRate / 5);

class CaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.resampler = new StreamingResampler(sampleRate, WIRE_RATE);
    this.mono = new Float32Array(128);
    this.resampled = new Float32Array(this.resampler.maxOutput(128));
    this.chunk = new Int16Array(CHUNK_SAMPLES);
    this.filled = 0;
    this.captureId = null;
    this.capturedSamples = 0;
    this.framesSeen = 0;
    this.levelFrames = 0;
    this.levelSquares = 0;
    this.recent = new Float32Array(RECENT_FRAMES);
    this.recentWrite = 0;
    this.recentFilled = 0;
    this.nextFrame = 0;
    this.closed = false;
    this.port.onmessage = (event) => this.receive(event.data);
  }

  receive(message) {
    switch (message.type) {
      case "start": {
        this.captureId = message.id;
        this.capturedSamples = 0;
        this.filled = 0;
        this.resampler.reset();
        const sincePress = Math.max(0, this.nextFrame - Math.round(message.fromFrame ?? this.nextFrame));
        const preroll = Math.min(sincePress, this.recentFilled);
        if (preroll > 0) this.forward(this.recentTail(preroll));
        this.port.postMessage({
          type: "started",
          id: message.id,
          prerollMs: (preroll * 1000) / sampleRate,
          missedMs: ((sincePress - preroll) * 1000) / sampleRate,
        });
        break;
      }
      case "stop":
        if (this.captureId === message.id) {
          this.flushChunk();
          this.captureId = null;
        }
        this.port.postMessage({ type: "stopped", id: message.id, samples: this.capturedSamples });
        break;
      case "close":
        this.captureId = null;
        this.closed = true;
        break;
    }
  }

  process(inputs) {
    const channels = inputs[0];
    if (this.closed) return false;
    if (!channels || channels.length === 0) return true;
    const frames = channels[0].length;
    const mono = this.monoBuffer(frames);
    for (let frame = 0; frame < frames; frame += 1) {
      let sum = 0;
      for (const channel of channels) sum += channel[frame];
      mono[frame] = sum / channels.length;
    }
    this.measure(mono);
    this.remember(mono);
    this.nextFrame = currentFrame + frames;
    if (this.captureId !== null) this.forward(mono);
    return true;
  }

  remember(mono) {
    for (const sample of mono) {
      this.recent[this.recentWrite] = sample;
      this.recentWrite = (this.recentWrite + 1) % RECENT_FRAMES;
    }
    this.recentFilled = Math.min(RECENT_FRAMES, this.recentFilled + mono.length);
  }

  /** The last `count` frames kept, oldest first. */
  recentTail(count) {
    const tail = new Float32Array(count);
    const start = (this.recentWrite - count + RECENT_FRAMES) % RECENT_FRAMES;
    for (let index = 0; index < count; index += 1) tail[index] = this.recent[(start + index) % RECENT_FRAMES];
    return tail;
  }

  monoBuffer(frames) {
    if (this.mono.length < frames) {
      this.mono = new Float32Array(frames);
      this.resampled = new Float32Array(this.resampler.maxOutput(frames));
    }
    return this.mono.subarray(0, frames);
  }

  measure(mono) {
    for (const sample of mono) this.levelSquares += sample * sample;
    this.levelFrames += mono.length;
    this.framesSeen += mono.length;
    if (this.levelFrames < LEVEL_INTERVAL_FRAMES) return;
    const rms = Math.sqrt(this.levelSquares / this.levelFrames);
    this.port.postMessage({ type: "level", rms, seconds: this.framesSeen / sampleRate });
    this.levelFrames = 0;
    this.levelSquares = 0;
  }

  forward(mono) {
    for (let offset = 0; offset < mono.length; offset += 128) {
      this.forwardBlock(mono.subarray(offset, Math.min(mono.length, offset + 128)));
    }
  }

  forwardBlock(mono) {
    const count = this.resampler.process(mono, this.resampled);
    for (let index = 0; index < count; index += 1) {
      const clamped = Math.max(-1, Math.min(1, this.resampled[index]));
      this.chunk[this.filled] = clamped < 0 ? Math.round(clamped * 32768) : Math.round(clamped * 32767);
      this.filled += 1;
      if (this.filled === CHUNK_SAMPLES) this.flushChunk();
    }
  }

  flushChunk() {
    if (this.filled === 0) return;
    const samples = this.chunk.slice(0, this.filled);
    this.capturedSamples += this.filled;
    this.filled = 0;
    this.port.postMessage({ type: "audio", id: this.captureId, samples }, [samples.buffer]);
  }
}

registerProcessor("parley-capture", CaptureProcessor);
