// Latency: p50/p95 voice-to-voice and sessions started, per hour over the last day, from the
// figures Parley stores (no collector needed).

import { api } from "./api.js";
import { h, svg, ms, failure } from "./dom.js";

const WIDTH = 720;
const HEIGHT = 180;

export async function showCharts(view) {
  view.append(h("h2", {}, "Latency"));
  let stats;
  try {
    stats = await api("/stats?bucket=3600");
  } catch (error) {
    view.append(failure(error));
    return;
  }
  view.append(
    h("dl", { class: "facts", "data-testid": "stats" },
      h("dt", {}, "Voice to voice, p50"), h("dd", {}, ms(stats.voice_to_voice.p50)),
      h("dt", {}, "Voice to voice, p95"), h("dd", {}, ms(stats.voice_to_voice.p95)),
      h("dt", {}, "Turns"), h("dd", {}, stats.voice_to_voice.count),
      h("dt", {}, "Sessions"), h("dd", {}, stats.sessions)),
    chart("Voice to voice per hour (ms): p50 solid, p95 dashed", stats.buckets, [
      { value: (bucket) => bucket.voice_to_voice.p50, kind: "p50" },
      { value: (bucket) => bucket.voice_to_voice.p95, kind: "p95" },
    ]),
    chart("Sessions started per hour", stats.buckets, [{ value: (bucket) => bucket.sessions, kind: "sessions", bars: true }]));
}

function chart(title, buckets, series) {
  const values = series.flatMap((line) => buckets.map(line.value)).filter((value) => value !== null && value !== undefined);
  const top = Math.max(1, ...values);
  const step = WIDTH / Math.max(1, buckets.length);
  const y = (value) => HEIGHT - 20 - (value / top) * (HEIGHT - 30);
  const marks = series.map((line) => {
    if (line.bars) {
      return buckets.map((bucket, index) => svg("rect", {
        class: `bar ${line.kind}`, x: index * step + 1, width: Math.max(1, step - 2), y: y(line.value(bucket)), height: HEIGHT - 20 - y(line.value(bucket)),
      }));
    }
    const points = buckets.map((bucket, index) => [index * step + step / 2, line.value(bucket)]).filter(([, value]) => value !== null && value !== undefined);
    return [svg("polyline", { class: `line ${line.kind}`, points: points.map(([x, value]) => `${x},${y(value)}`).join(" ") }),
      points.map(([x, value]) => svg("circle", { class: `dot ${line.kind}`, cx: x, cy: y(value), r: 3 }))];
  });
  const summary = `${title}; highest ${Math.round(top)}`;
  return h("figure", { class: "chart" },
    svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": summary },
      svg("line", { class: "axis", x1: 0, x2: WIDTH, y1: HEIGHT - 20, y2: HEIGHT - 20 }),
      svg("text", { class: "axis-label", x: 2, y: 12 }, String(Math.round(top))),
      marks),
    h("figcaption", {}, title));
}
