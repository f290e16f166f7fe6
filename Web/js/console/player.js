// The recording player: both channels (caller left, agent right) drawn as waveforms on a
// canvas from the WAV itself, a playhead that moves as it plays, and seeking by clicking the
// waveform or a turn of the transcript.

import { fetchBytes } from "./api.js";
import { h } from "./dom.js";

/** Reads a 16-bit PCM WAV: its sample rate and its channels as Float32Arrays. */
export function readWAV(buffer) {
  const data = new DataView(buffer);
  const text = (offset) => String.fromCharCode(...new Uint8Array(buffer, offset, 4));
  if (buffer.byteLength < 44 || text(0) !== "RIFF" || text(8) !== "WAVE") throw new Error("The recording is not a WAV file.");
  let offset = 12;
  let channels = 1;
  let rate = 24000;
  while (offset + 8 <= buffer.byteLength) {
    const id = text(offset);
    const size = data.getUint32(offset + 4, true);
    if (id === "fmt ") {
      channels = data.getUint16(offset + 10, true);
      rate = data.getUint32(offset + 12, true);
    } else if (id === "data") {
      const frames = Math.floor(Math.min(size, buffer.byteLength - offset - 8) / (2 * channels));
      const out = Array.from({ length: channels }, () => new Float32Array(frames));
      for (let frame = 0; frame < frames; frame++) {
        for (let channel = 0; channel < channels; channel++) {
          out[channel][frame] = data.getInt16(offset + 8 + (frame * channels + channel) * 2, true) / 32768;
        }
      }
      return { rate, channels: out };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error("The recording has no audio.");
}

/** A player for the recording at `url`; `onTime(ms)` hears the playhead move. */
export async function player(url, onTime) {
  const bytes = await fetchBytes(url);
  const { rate, channels } = readWAV(bytes.slice(0));
  const audio = h("audio", { controls: true, preload: "auto", "data-testid": "recording-audio", "aria-label": "Call recording" });
  audio.src = URL.createObjectURL(new Blob([bytes], { type: "audio/wav" }));
  const canvas = h("canvas", {
    width: 800, height: 160, class: "waveform", "data-testid": "waveform", tabindex: 0, role: "slider",
    "aria-label": "Recording position: caller above, agent below", "aria-valuemin": 0,
    "aria-valuemax": Math.round(channels[0].length / rate), "aria-valuenow": 0,
  });
  const peaks = channels.map((samples) => peaksOf(samples, canvas.width));
  const seek = (ms) => { audio.currentTime = Math.max(0, ms / 1000); draw(); };
  function draw() {
    const context = canvas.getContext("2d");
    const style = getComputedStyle(canvas);
    context.clearRect(0, 0, canvas.width, canvas.height);
    const lane = canvas.height / 2;
    const colors = [style.getPropertyValue("--caller").trim() || "#3d5afe", style.getPropertyValue("--agent").trim() || "#2e7d32"];
    peaks.slice(0, 2).forEach((channel, index) => {
      context.fillStyle = colors[index];
      const middle = lane * index + lane / 2;
      channel.forEach((peak, x) => {
        const half = Math.max(0.5, peak * (lane / 2 - 4));
        context.fillRect(x, middle - half, 1, half * 2);
      });
    });
    const duration = channels[0].length / rate;
    const x = duration ? (audio.currentTime / duration) * canvas.width : 0;
    context.fillStyle = style.getPropertyValue("--text").trim() || "#000";
    context.fillRect(x, 0, 2, canvas.height);
    canvas.setAttribute("aria-valuenow", String(Math.round(audio.currentTime)));
  }
  canvas.addEventListener("click", (event) => {
    const box = canvas.getBoundingClientRect();
    seek(((event.clientX - box.left) / box.width) * (channels[0].length / rate) * 1000);
  });
  canvas.addEventListener("keydown", (event) => {
    const step = { ArrowLeft: -5000, ArrowRight: 5000 }[event.key];
    if (step) { event.preventDefault(); seek(audio.currentTime * 1000 + step); }
  });
  audio.addEventListener("timeupdate", () => { draw(); onTime(audio.currentTime * 1000); });
  audio.addEventListener("seeked", () => { draw(); onTime(audio.currentTime * 1000); });
  const element = h("div", { class: "player" },
    h("p", { class: "legend" }, h("span", { class: "key caller" }, "Caller"), " ", h("span", { class: "key agent" }, "Agent")),
    canvas, audio);
  requestAnimationFrame(draw);
  return { element, seek, audio, stop: () => { audio.pause(); URL.revokeObjectURL(audio.src); } };
}

/** The loudest sample of each of `width` slices of `samples`. */
function peaksOf(samples, width) {
  const peaks = new Float32Array(width);
  const per = Math.max(1, Math.floor(samples.length / width));
  for (let x = 0; x < width; x++) {
    let peak = 0;
    for (let index = x * per; index < Math.min(samples.length, (x + 1) * per); index++) peak = Math.max(peak, Math.abs(samples[index]));
    peaks[x] = peak;
  }
  return peaks;
}
