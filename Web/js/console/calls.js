// Conversations: the stored calls, newest first, searchable by what was said and by ids,
// filterable, a page at a time.

import { api } from "./api.js";
import { h, duration, when, failure } from "./dom.js";

const PAGE_SIZE = 50;

export async function showCalls(view) {
  const field = (label, name, attributes = {}) => h("label", {}, label, h("input", { name, ...attributes }));
  const form = h("form", { class: "filters", role: "search", "aria-label": "Filter conversations" },
    field("Said", "q", { type: "search", placeholder: "words in the transcript", "data-testid": "transcript-search" }),
    field("Search", "search", { type: "search", placeholder: "id, user or agent", "data-testid": "search" }),
    field("Agent", "agent"),
    field("User", "user"),
    h("label", {}, "Door", h("select", { name: "door" }, ["", "websocket", "webrtc", "twilio", "sip"].map((door) => h("option", { value: door }, door || "any")))),
    field("From", "from", { type: "date" }),
    field("To", "to", { type: "date" }),
    field("At least (s)", "min_duration", { type: "number", min: 0 }),
    h("label", {}, "Errors", h("select", { name: "errors" }, h("option", { value: "" }, "any"), h("option", { value: "true" }, "with errors"), h("option", { value: "false" }, "without"))),
    h("button", { type: "submit" }, "Filter"));
  const status = h("p", { class: "muted", role: "status" });
  const body = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "Older conversations");
  view.append(h("h2", {}, "Conversations"), form, status,
    h("table", { class: "grid", "data-testid": "calls" },
      h("caption", {}, "Calls, newest first"),
      h("thead", {}, h("tr", {}, ["Started", "Conversation", "Agent", "User", "Door", "Duration", "Turns", "Errors"].map((name) => h("th", { scope: "col" }, name)))),
      body),
    more);

  let cursor = null;
  async function load(reset) {
    const parameters = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (value) parameters.set(name, value);
    if (parameters.has("to")) parameters.set("to", String(Date.parse(parameters.get("to")) / 1000 + 86400));
    parameters.set("limit", String(PAGE_SIZE));
    if (!reset && cursor) parameters.set("cursor", cursor);
    try {
      const page = await api(`/calls?${parameters}`);
      if (reset) body.replaceChildren();
      body.append(...page.data.map(row));
      cursor = page.next_cursor ?? null;
      more.hidden = !cursor;
      status.textContent = body.children.length ? `${body.children.length} shown` : "No conversation matches.";
    } catch (error) {
      status.replaceChildren(failure(error));
    }
  }

  function row(call) {
    return h("tr", {},
      h("td", {}, when(call.started_at)),
      h("td", {}, h("a", { href: `#conversation/${encodeURIComponent(call.conversation_id)}` }, call.conversation_id)),
      h("td", {}, call.agent_id ?? "–"),
      h("td", {}, call.user ?? "backend"),
      h("td", {}, call.door),
      h("td", {}, call.live ? `${duration(call.duration_seconds)} (live)` : duration(call.duration_seconds)),
      h("td", {}, call.turns),
      h("td", { class: call.errors ? "bad" : "" }, call.errors));
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); load(true); });
  more.addEventListener("click", () => load(false));
  await load(true);
}
