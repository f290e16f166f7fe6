// Live: every session running now, on every door and node, with buttons to interrupt the agent
// or end the session. The list follows the server's stream of changes
// (/v1/console/sessions/events); while the stream cannot be had, it is asked for every two
// seconds instead, and the stream is tried again.

import { api, storedToken } from "./api.js";
import { h, duration, failure } from "./dom.js";

const REFRESH_MS = 2000;

export async function showLive(view) {
  const status = h("p", { class: "muted", role: "status" });
  const body = h("tbody");
  const table = h("table", { class: "grid", "data-testid": "live-sessions" },
    h("caption", {}, "Sessions now"),
    h("thead", {}, h("tr", {}, ["Session", "Agent", "User", "Door", "Node", "Duration", "State", "Actions"].map((name) => h("th", { scope: "col" }, name)))),
    body);
  view.append(h("h2", {}, "Live"), status, table);

  let stopped = false;
  let streaming = false;
  let stream = null;
  let shownAt = performance.now();

  function show(data) {
    shownAt = performance.now();
    body.replaceChildren(...data.map(row));
    if (!data.length) body.append(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No session is live.")));
    status.textContent = `${data.length} live · ${streaming ? "following changes" : `updated ${new Date().toLocaleTimeString()}`}`;
  }

  async function refresh() {
    try {
      show((await api("/sessions")).data);
    } catch (error) {
      status.replaceChildren(failure(error));
    }
  }

  /** Shows each list the server streams; returns when the stream ends or cannot be had. */
  async function follow() {
    stream = new AbortController();
    const response = await fetch("/v1/console/sessions/events", {
      headers: { Authorization: `Bearer ${storedToken() ?? ""}` }, signal: stream.signal, cache: "no-store",
    });
    if (!response.ok || !response.body) return;
    streaming = true;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value.replaceAll("\r\n", "\n");
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const event = parseEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event.type === "sessions") show(JSON.parse(event.data).data);
          else if (event.type === "failure") status.replaceChildren(failure(JSON.parse(event.data)));
        }
      }
    } finally {
      streaming = false;
    }
  }

  async function run() {
    while (!stopped) {
      await follow().catch(() => {});
      if (stopped) return;
      await refresh();
      await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
    }
  }

  function row(session) {
    const act = (action, label) => h("button", {
      type: "button", "aria-label": `${label} session ${session.id}`, "data-testid": `${action}-${session.id}`,
      onclick: async (event) => {
        event.target.disabled = true;
        try {
          await api(`/sessions/${encodeURIComponent(session.id)}/${action}`, { method: "POST", body: { node: session.node } });
          status.textContent = `${label}: ${session.id}`;
        } catch (error) {
          status.replaceChildren(failure(error));
        }
        if (!streaming) refresh();
      },
    }, label);
    return h("tr", { "data-session": session.id },
      h("td", {}, session.conversation_id ? h("a", { href: `#conversation/${encodeURIComponent(session.conversation_id)}` }, session.id) : session.id),
      h("td", {}, session.agent_id ?? "–"),
      h("td", {}, session.user ?? "backend"),
      h("td", {}, session.door),
      h("td", {}, session.node),
      h("td", { dataset: { seconds: session.duration_seconds } }, duration(session.duration_seconds)),
      h("td", {}, h("span", { class: `state state-${session.state}`, "data-testid": "state" }, session.state.replace("_", " "))),
      h("td", { class: "actions" }, act("interrupt", "Interrupt"), act("end", "End")));
  }

  // Durations count up here; the server sends a list only when something else changed.
  const ticker = setInterval(() => {
    const elapsed = (performance.now() - shownAt) / 1000;
    for (const cell of body.querySelectorAll("td[data-seconds]")) cell.textContent = duration(Number(cell.dataset.seconds) + elapsed);
  }, 1000);

  await refresh();
  run();
  return () => { stopped = true; stream?.abort(); clearInterval(ticker); };
}

/** One Server-Sent Event's type and data. */
function parseEvent(block) {
  const event = { type: "message", data: "" };
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event.type = value;
    else if (field === "data") data.push(value);
  }
  event.data = data.join("\n");
  return event;
}
