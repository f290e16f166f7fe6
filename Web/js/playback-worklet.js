// AudioWorklet processor that plays queued 24 kHz speech chunks at the context's rate, stops at
// once on request, pauses and resumes without losing its place, and reports, per item, how much
// of it has been played.

const WIRE_RATE = 24000;
const REPORT_INTERVAL_FRAMES = Math.round(sampleRate / 20);

class PlaybackProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = WIRE_RATE / sampleRate;
    this.queue = [];
    this.readIndex = 0;
    this.fraction = 0;
    this.itemId = null;
    this.itemSamples = 0;
    this.chunksPlayed = 0;
    this.totalSamples = 0;
    this.playing = false;
    this.framesSinceReport = 0;
    this.paused = false;
    this.port.onmessage = (event) => this.receive(event.data);
  }

  receive(message) {
    if (message.type === "enqueue") {
      this.queue.push({ itemId: message.itemId, samples: message.samples });
    } else if (message.type === "stop") {
      this.stop(message.requestId);
    } else if (message.type === "pause" || message.type === "resume") {
      this.paused = message.type === "pause";
    }
  }

  stop(requestId) {
    let itemId = this.itemId;
    let playedSamples = this.itemSamples;
    if (this.queue.length > 0 && this.queue[0].itemId !== itemId && this.readIndex === 0) {
      itemId = this.queue[0].itemId;
      playedSamples = 0;
    }
    const wasPlaying = this.playing || this.queue.length > 0;
    this.queue = [];
    this.readIndex = 0;
    this.fraction = 0;
    this.playing = false;
    this.paused = false;
    this.port.postMessage({
      type: "stopped", requestId, wasPlaying, itemId, playedSamples, ...this.counters(),
    });
  }

  counters() {
    return { chunksPlayed: this.chunksPlayed, totalSamples: this.totalSamples };
  }

  process(_inputs, outputs) {
    const channels = outputs[0];
    const output = channels[0];
    let frame = 0;
    if (this.paused) {
      for (const channel of channels) channel.fill(0);
      return true;
    }
    if (this.queue.length > 0 && !this.playing) {
      this.playing = true;
      this.port.postMessage({ type: "started" });
    }
    while (frame < output.length && this.queue.length > 0) {
      const chunk = this.queue[0];
      if (chunk.itemId !== this.itemId) {
        this.itemId = chunk.itemId;
        this.itemSamples = 0;
      }
      const current = chunk.samples[this.readIndex];
      const next = this.readIndex + 1 < chunk.samples.length
        ? chunk.samples[this.readIndex + 1]
        : (this.queue[1] ? this.queue[1].samples[0] : current);
      output[frame] = current + (next - current) * this.fraction;
      frame += 1;
      this.fraction += this.step;
      while (this.fraction >= 1 && this.queue.length > 0) {
        this.fraction -= 1;
        this.advanceOneSample();
      }
    }
    output.fill(0, frame);
    for (let channel = 1; channel < channels.length; channel += 1) channels[channel].set(output);
    this.report(output.length);
    return true;
  }

  advanceOneSample() {
    this.readIndex += 1;
    this.itemSamples += 1;
    this.totalSamples += 1;
    if (this.readIndex < this.queue[0].samples.length) return;
    this.queue.shift();
    this.readIndex = 0;
    this.chunksPlayed += 1;
  }

  report(frames) {
    if (!this.playing) return;
    this.framesSinceReport += frames;
    const drained = this.queue.length === 0;
    if (this.framesSinceReport >= REPORT_INTERVAL_FRAMES || drained) {
      this.framesSinceReport = 0;
      this.port.postMessage({
        type: "progress", itemId: this.itemId, playedSamples: this.itemSamples, ...this.counters(),
      });
    }
    if (drained) {
      this.playing = false;
      this.fraction = 0;
      this.port.postMessage({ type: "drained" });
    }
  }
}

registerProcessor("parley-playback", PlaybackProcessor);
