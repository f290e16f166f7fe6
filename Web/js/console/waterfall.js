// A turn's waterfall: where the time went from the end of the caller's speech to the agent's
// first audio, as SVG bars on one time axis — the silence window and the turn detector's wait
// (before the turn ended), then the transcript, the first token and the first audio.

import { svg } from "./dom.js";

const WIDTH = 560;
const ROW = 22;
const LABEL = 130;

/** The stages of `turn` as [label, start ms, end ms, class], from the end of speech. */
export function stages(turn) {
  const silence = turn.silence_window_ms ?? 0;
  const wait = turn.detector_wait_ms ?? 0;
  const ended = silence + wait;
  const rows = [];
  if (turn.silence_window_ms !== null && turn.silence_window_ms !== undefined) rows.push(["Silence window", 0, silence, "silence"]);
  if (turn.detector_wait_ms !== null && turn.detector_wait_ms !== undefined) rows.push(["Detector wait", silence, ended, "wait"]);
  if (turn.transcription_ms !== null && turn.transcription_ms !== undefined) rows.push(["Transcript", ended, ended + turn.transcription_ms, "transcript"]);
  if (turn.first_token_ms !== null && turn.first_token_ms !== undefined) rows.push(["First token", ended, ended + turn.first_token_ms, "token"]);
  if (turn.first_audio_ms !== null && turn.first_audio_ms !== undefined) rows.push(["First audio", ended, ended + turn.first_audio_ms, "audio"]);
  return rows;
}

/** The waterfall of `turn` as an SVG element with a text alternative. */
export function waterfall(turn, index) {
  const rows = stages(turn);
  const total = Math.max(1, ...rows.map((row) => row[2]));
  const scale = (WIDTH - LABEL - 70) / total;
  const height = rows.length * ROW + 8;
  const summary = rows.map(([label, start, end]) => `${label} ${Math.round(start)}–${Math.round(end)} ms`).join(", ");
  return svg("svg", {
    class: "waterfall", viewBox: `0 0 ${WIDTH} ${height}`, width: WIDTH, height, role: "img",
    "aria-label": `Turn ${index + 1}: ${summary || "no figures"}`, "data-testid": "waterfall",
  }, rows.map(([label, start, end, kind], row) => {
    const y = row * ROW + 4;
    const x = LABEL + start * scale;
    const width = Math.max(2, (end - start) * scale);
    return svg("g", { class: `stage stage-${kind}` },
      svg("text", { x: 0, y: y + 14, class: "stage-label" }, label),
      svg("rect", { x, y, width, height: ROW - 6, rx: 3 }),
      svg("text", { x: x + width + 6, y: y + 14, class: "stage-value" }, `${Math.round(end)} ms`));
  }));
}
