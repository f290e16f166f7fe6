// The operator console: asks for a console token (or the server secret) once per tab, then
// shows the view the URL's hash names — #live, #calls, #conversation/<id>, #charts, #agents,
// #agent/<id> — each rendered into <main id="view">.

import { api, APIError, storedToken, storeToken } from "./api.js";
import { showLive } from "./live.js";
import { showCalls } from "./calls.js";
import { showConversation } from "./conversation.js";
import { showCharts } from "./charts.js";
import { showAgents, showAgent } from "./agents.js";

const view = document.getElementById("view");
const nav = document.getElementById("nav");
const signIn = document.getElementById("sign-in");
const signInError = document.getElementById("sign-in-error");

/** Stops whatever the current view keeps running (polling, playback). */
let leaveView = () => {};

async function route() {
  leaveView();
  leaveView = () => {};
  if (!storedToken()) return askForToken();
  const [name, ...rest] = (location.hash.slice(1) || "live").split("/");
  const argument = decodeURIComponent(rest.join("/"));
  for (const link of nav.querySelectorAll("a")) {
    const current = link.dataset.view === name || (name === "conversation" && link.dataset.view === "calls")
      || (name === "agent" && link.dataset.view === "agents");
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  view.replaceChildren();
  const views = {
    live: () => showLive(view),
    calls: () => showCalls(view),
    conversation: () => showConversation(view, argument),
    charts: () => showCharts(view),
    agents: () => showAgents(view),
    agent: () => showAgent(view, argument),
  };
  try {
    leaveView = (await (views[name] ?? views.live)()) ?? (() => {});
  } catch (error) {
    if (error instanceof APIError && (error.status === 401 || error.status === 403)) {
      storeToken(null);
      return askForToken(error.message);
    }
    throw error;
  }
}

function askForToken(message = "") {
  nav.hidden = true;
  view.replaceChildren();
  signIn.hidden = false;
  signInError.textContent = message;
  document.getElementById("token").focus();
}

document.getElementById("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = document.getElementById("token").value.trim();
  try {
    await api("/sessions", { token });
  } catch (error) {
    signInError.textContent = error.message;
    return;
  }
  storeToken(token);
  document.getElementById("token").value = "";
  signIn.hidden = true;
  nav.hidden = false;
  route();
});

document.getElementById("sign-out").addEventListener("click", () => {
  storeToken(null);
  route();
});

window.addEventListener("hashchange", route);
nav.hidden = !storedToken();
route();
