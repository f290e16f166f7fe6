// One conversation the way the caller experienced it: each user turn, the agent's reply with
// what the caller never heard struck through, tool calls with their arguments and results,
// where the conversation was handed to another agent, the filler lines said while tools ran,
// and the interruption verdicts with their reasons; each turn with its waterfall; and the
// recording, whose playhead the transcript follows and which a click on a turn seeks.

import { api } from "./api.js";
import { h, duration, when, ms, failure } from "./dom.js";
import { waterfall } from "./waterfall.js";
import { player } from "./player.js";

/** How long before the end of the caller's speech a turn's playback starts. */
const LEAD_MS = 2000;

export async function showConversation(view, id) {
  view.append(h("p", {}, h("a", { href: "#calls" }, "← Conversations")));
  let conversation;
  try {
    conversation = await api(`/conversations/${encodeURIComponent(id)}`);
  } catch (error) {
    view.append(h("h2", {}, "Conversation"), failure(error));
    return;
  }
  const { calls, items, turns } = conversation;
  view.append(
    h("h2", {}, `Conversation ${conversation.id}`),
    h("dl", { class: "facts" },
      fact("Agent", conversation.agent_id ?? "–"),
      fact("Calls", calls.map((call) => `${call.door} · ${call.user ?? "backend"} · ${when(call.started_at)} · ${duration(call.duration_seconds)}${call.live ? " (live)" : ""}${call.errors ? ` · ${call.errors} errors` : ""}`).join("; ") || "–")));

  let recording = null;
  let transcript = null;
  if (conversation.recording) {
    try {
      recording = await player(conversation.recording.url, follow);
      view.append(h("section", { "aria-labelledby": "recording-title", class: "recording" }, h("h3", { id: "recording-title" }, "Recording"), recording.element));
    } catch (error) {
      view.append(failure(error));
    }
  }
  transcript = h("ol", { class: "transcript", "data-testid": "transcript", "aria-label": "Transcript" }, group(items, turns).map(render));
  view.append(h("h3", {}, "Transcript"), transcript);

  function render(exchange, index) {
    const turn = exchange.turn;
    const element = h("li", { class: "exchange", "data-testid": "exchange", dataset: { recordingMs: turn?.recording_ms ?? "" } });
    for (const item of exchange.items) {
      if (item.handoff_from) element.append(handoff(item));
      element.append(renderItem(item, turn));
    }
    for (const verdict of turn?.verdicts ?? []) {
      element.append(h("p", { class: `verdict ${verdict.interrupts ? "interrupts" : "ignored"}`, "data-testid": "verdict" },
        verdict.interrupts ? "Interrupted: " : "Not an interruption: ", verdict.reason.replaceAll("_", " "),
        verdict.words ? ` (“${verdict.words}”)` : ""));
    }
    if (turn) {
      element.append(h("details", { class: "figures", open: true },
        h("summary", {}, `Turn ${index + 1}: voice to voice ${ms(turn.voice_to_voice_ms)}${turn.status === "completed" ? "" : ` · ${turn.status}`}`),
        waterfall(turn, index)));
      if (recording && turn.recording_ms !== null && turn.recording_ms !== undefined) {
        element.append(h("button", {
          type: "button", class: "seek", "data-testid": "seek",
          onclick: () => { recording.seek(Math.max(0, turn.recording_ms - LEAD_MS)); recording.audio.play().catch(() => {}); },
        }, `Play turn ${index + 1}`));
      }
    }
    return element;
  }

  function renderItem(item, turn) {
    switch (item.role) {
      case "user":
        return h("p", { class: "line user" }, h("span", { class: "who" }, "Caller"), item.text || "(no words)");
      case "assistant": {
        const parts = [];
        if (item.text) parts.push(...spoken(item));
        if (item.interrupted && turn?.unheard_text) parts.push(" ", h("del", { "data-testid": "unheard", title: "Not heard by the caller" }, turn.unheard_text));
        for (const call of item.tool_calls ?? []) parts.push(h("code", { class: "tool-call" }, `${call.name}(${call.arguments})`));
        const who = item.agent_name ?? item.agent_id ?? "Agent";
        return h("p", { class: "line agent" }, h("span", { class: "who" }, item.interrupted ? `${who} (interrupted)` : who), ...parts);
      }
      case "tool":
        return h("p", { class: "line tool" }, h("span", { class: "who" }, "Tool result"), h("code", {}, item.text));
      default:
        return h("p", { class: "line" }, h("span", { class: "who" }, item.role), item.text);
    }
  }

  /** Marks the turn the playhead is in. */
  function follow(playheadMs) {
    if (!transcript) return;
    let current = null;
    for (const element of transcript.children) {
      const start = Number(element.dataset.recordingMs);
      if (element.dataset.recordingMs !== "" && start - LEAD_MS <= playheadMs) current = element;
    }
    for (const element of transcript.children) {
      if (element === current) element.setAttribute("aria-current", "true");
      else element.removeAttribute("aria-current");
    }
  }
}

/** The line that marks where the conversation was handed to the item's agent. */
function handoff(item) {
  const to = item.agent_name ?? item.agent_id;
  return h("p", { class: "handoff", role: "note", "data-testid": "handoff" },
    `Handed from ${item.handoff_from_name ?? item.handoff_from} to ${to}`);
}

/** An agent item's text, its filler line (if any) labelled and set apart. */
function spoken(item) {
  const at = item.filler ? item.text.indexOf(item.filler) : -1;
  if (at < 0) return [h("span", {}, item.text)];
  const before = item.text.slice(0, at).trim();
  const after = item.text.slice(at + item.filler.length).trim();
  return [
    before && h("span", {}, before + " "),
    h("span", { class: "filler", "data-testid": "filler", title: "Filler: said while the tools ran" },
      h("span", { class: "filler-label" }, "Filler: "), item.filler),
    after && h("span", {}, " " + after),
  ];
}

function fact(name, value) {
  return [h("dt", {}, name), h("dd", {}, value)];
}

/** The items cut into exchanges, each from a user turn on, with the figures of its turn. */
function group(items, turns) {
  const byUserItem = new Map(turns.filter((turn) => turn.user_item_id).map((turn) => [turn.user_item_id, turn]));
  const unplaced = turns.filter((turn) => !turn.user_item_id);
  const exchanges = [];
  for (const item of items) {
    if (item.role === "user" || !exchanges.length) {
      exchanges.push({ items: [], turn: item.role === "user" ? byUserItem.get(item.id) : undefined });
    }
    exchanges[exchanges.length - 1].items.push(item);
  }
  for (const exchange of exchanges) if (!exchange.turn && unplaced.length && exchange.items.some((item) => item.role === "assistant")) exchange.turn = unplaced.shift();
  return exchanges;
}
