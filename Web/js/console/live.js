// Live: every session running now, on every door and node, refreshed every two seconds, with
// buttons to interrupt the agent or end the session.

import { api } from "./api.js";
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

  let timer;
  let stopped = false;
  async function refresh() {
    try {
      const { data } = await api("/sessions");
      body.replaceChildren(...data.map(row));
      if (!data.length) body.append(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No session is live.")));
      status.textContent = `${data.length} live · updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      status.replaceChildren(failure(error));
    }
    if (!stopped) timer = setTimeout(refresh, REFRESH_MS);
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
        refresh();
      },
    }, label);
    return h("tr", { "data-session": session.id },
      h("td", {}, session.conversation_id ? h("a", { href: `#conversation/${encodeURIComponent(session.conversation_id)}` }, session.id) : session.id),
      h("td", {}, session.agent_id ?? "–"),
      h("td", {}, session.user ?? "backend"),
      h("td", {}, session.door),
      h("td", {}, session.node),
      h("td", {}, duration(session.duration_seconds)),
      h("td", {}, h("span", { class: `state state-${session.state}`, "data-testid": "state" }, session.state.replace("_", " "))),
      h("td", { class: "actions" }, act("interrupt", "Interrupt"), act("end", "End")));
  }

  await refresh();
  return () => { stopped = true; clearTimeout(timer); };
}
