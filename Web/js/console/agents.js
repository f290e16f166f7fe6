// Agents: the list, and a form to create or edit one. The server validates; each problem it
// names (`field: problem`) is shown under its field, the rest above the form.

import { api, APIError } from "./api.js";
import { h, when, failure } from "./dom.js";

/** The form's fields: label, the problem prefix the server uses, and how to read and write it. */
const FIELDS = [
  { name: "name", label: "Name", problem: "name", read: (agent) => agent.name ?? "", write: (body, value) => { body.name = value; } },
  { name: "instructions", label: "Instructions", problem: "instructions", multiline: true, read: (agent) => agent.instructions ?? "", write: (body, value) => { body.instructions = value; } },
  { name: "voice", label: "Voice", problem: "voice", read: (agent) => agent.voice ?? "", write: (body, value) => { if (value) body.voice = value; } },
  {
    name: "temperature", label: "Temperature (0–2)", problem: "llm.temperature", type: "number", step: "0.1",
    read: (agent) => agent.llm?.temperature ?? "", write: (body, value) => { if (value !== "") body.llm = { ...(body.llm ?? {}), temperature: Number(value) }; },
  },
];

export async function showAgents(view) {
  view.append(h("h2", {}, "Agents"), h("p", {}, h("a", { href: "#agent/new", class: "button" }, "New agent")));
  let agents;
  try {
    ({ data: agents } = await api("/agents"));
  } catch (error) {
    view.append(failure(error));
    return;
  }
  view.append(h("table", { class: "grid", "data-testid": "agents" },
    h("caption", {}, "Agents, oldest first"),
    h("thead", {}, h("tr", {}, ["Name", "Id", "Updated", "Actions"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, agents.length ? agents.map((agent) => h("tr", {},
      h("td", {}, h("a", { href: `#agent/${encodeURIComponent(agent.id)}` }, agent.name ?? agent.id)),
      h("td", {}, h("code", {}, agent.id)),
      h("td", {}, agent.updated_at ? when(agent.updated_at) : "–"),
      h("td", {}, talkLink(agent)))) : h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No agent yet.")))));
}

/** The web client, talking to `agent`. */
function talkLink(agent) {
  return h("a", { href: `/?agent=${encodeURIComponent(agent.id)}`, target: "_blank", rel: "noopener", "data-testid": `talk-${agent.id}` }, `Talk to ${agent.name ?? "this agent"}`);
}

export async function showAgent(view, id) {
  const creating = id === "new";
  let agent = {};
  if (!creating) {
    try {
      agent = await api(`/agents/${encodeURIComponent(id)}`);
    } catch (error) {
      view.append(h("p", {}, h("a", { href: "#agents" }, "← Agents")), failure(error));
      return;
    }
  }
  const formError = h("div", { class: "error", role: "alert", id: "agent-form-error" });
  const status = h("p", { role: "status", class: "muted" });
  const inputs = new Map();
  const problems = new Map();
  const form = h("form", { class: "agent-form", "aria-describedby": "agent-form-error", novalidate: true },
    formError,
    FIELDS.map((field) => {
      const problem = h("p", { class: "field-error", id: `problem-${field.name}`, "data-testid": `problem-${field.name}` });
      const attributes = { id: `field-${field.name}`, name: field.name, "aria-describedby": problem.id, "data-testid": `field-${field.name}` };
      const input = field.multiline
        ? h("textarea", { ...attributes, rows: 6 }, field.read(agent))
        : h("input", { ...attributes, type: field.type ?? "text", step: field.step, value: field.read(agent) });
      inputs.set(field.name, input);
      problems.set(field.problem, problem);
      return h("div", { class: "field" }, h("label", { for: input.id }, field.label), input, problem);
    }),
    h("button", { type: "submit", "data-testid": "save-agent" }, creating ? "Create agent" : "Save changes"),
    status);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    for (const field of FIELDS) field.write(body, inputs.get(field.name).value);
    for (const [, element] of problems) element.textContent = "";
    for (const input of inputs.values()) input.removeAttribute("aria-invalid");
    formError.textContent = "";
    try {
      const saved = await api(creating ? "/agents" : `/agents/${encodeURIComponent(id)}`, { method: creating ? "POST" : "PATCH", body });
      status.textContent = `Saved ${saved.name ?? saved.id}.`;
      if (creating) location.hash = `#agent/${encodeURIComponent(saved.id)}`;
    } catch (error) {
      if (!(error instanceof APIError) || error.status !== 400) { formError.textContent = error.message; return; }
      showProblems(error.message);
    }
  });

  /** Puts each `field: problem` under its field; whatever names no field goes above the form. */
  function showProblems(message) {
    const unplaced = [];
    for (const problem of message.split("; ")) {
      const field = problem.split(":")[0];
      const element = problems.get(field);
      if (!element) { unplaced.push(problem); continue; }
      element.textContent = problem.slice(field.length + 1).trim();
      const input = inputs.get(FIELDS.find((candidate) => candidate.problem === field).name);
      input.setAttribute("aria-invalid", "true");
    }
    formError.textContent = unplaced.join("; ");
    const first = form.querySelector("[aria-invalid=true]");
    if (first) first.focus();
  }

  view.append(h("p", {}, h("a", { href: "#agents" }, "← Agents")),
    h("h2", {}, creating ? "New agent" : `Agent ${agent.name ?? id}`),
    creating ? "" : h("p", {}, talkLink(agent)),
    form);
}
