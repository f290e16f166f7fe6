// Wiring: builds the parts, binds the page's controls to the conversation, renders status, and
// exposes the read-only `window.parleyDebug` for tests and scripts.

import { resumeAudio } from "./audio-context.js";
import { Conversation } from "./conversation.js";
import { EnginesLine } from "./engines.js";
import { Microphone } from "./microphone.js";
import { Banner, MicrophoneHelp, StatusLine } from "./notices.js";
import { Orb } from "./orb.js";
import { ConnectionState, RealtimeConnection } from "./realtime-connection.js";
import { Speaker } from "./speaker.js";
import { Thread } from "./thread.js";

const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);
const talkButton = byTestId("talk");
const handsFreeSwitch = byTestId("handsfree");
const composer = byTestId("composer");
const sendButton = byTestId("send");
const composerForm = document.getElementById("composer-form");
const talkHint = document.getElementById("talk-hint");

const statusLine = new StatusLine(byTestId("status"));
const banner = new Banner(document.getElementById("banner"));
const thread = new Thread(document.getElementById("thread"), document.getElementById("thread-empty"));
const orb = new Orb(document.getElementById("orb-layer"), document.getElementById("orb-caption"));

const TALK_HINT = "Hold to talk · space bar";
const HANDS_FREE_HINT = "Hands-free: just talk · press to stop the agent";
const NO_MICROPHONE_HINT = "Microphone unavailable · you can type";
let hintTimer = 0;
let connectionInfo = { state: ConnectionState.connecting, detail: {} };
let countdownTimer = 0;
let lostConnection = false;

const view = {
  render,
  microphoneUnavailable() {
    if (microphone.state !== "failed") {
      showHint("Allow the microphone to talk");
      return;
    }
    microphoneHelp.show(microphone.problem);
    microphoneHelp.nudge();
  },
  notConnected() {
    showHint("Not connected yet — Parley is reconnecting");
  },
  quickTap() {
    showHint("Keep holding while you talk");
  },
  handsFreeChanged(on) {
    handsFreeSwitch.setAttribute("aria-checked", String(on));
    render();
  },
};

const microphone = new Microphone({
  onAudio: (captureId, samples) => conversation.microphoneAudio(captureId, samples),
  onLevel: (rms) => {
    orb.setLevel(rms);
    if (conversation.handsFree) talkButton.style.setProperty("--level", Math.min(1, rms * 8).toFixed(2));
  },
  onStateChange: (state, problem, detail) => {
    if (state === "failed") {
      microphoneHelp.show(problem, detail);
      conversation.microphoneLost();
    } else if (state === "open") {
      microphoneHelp.hide();
      connection.attachMicrophone(microphone.stream);
    }
    render();
  },
});

const microphoneHelp = new MicrophoneHelp(
  document.getElementById("mic-help"),
  document.getElementById("mic-help-text"),
  document.getElementById("mic-help-retry"),
  () => microphone.open(),
);

const speaker = new Speaker({
  onPlayingChange: () => render(),
  onCallStop: () => connection.send({ type: "output_audio_buffer.clear" }),
});

const connection = new RealtimeConnection({
  onEvent: (event) => conversation.handle(event),
  onOpen: () => {
    conversation.sessionOpened();
    if (lostConnection) thread.addNotice("Reconnected to Parley.", "info");
    lostConnection = false;
  },
  onClose: () => {
    lostConnection = true;
    thread.addNotice("Lost the connection to Parley.", "warning");
    conversation.sessionLost();
  },
  onStateChange: (state, detail) => {
    connectionInfo = { state, detail };
    if (state !== ConnectionState.connecting && state !== ConnectionState.open) lostConnection = true;
    render();
  },
});

const conversation = new Conversation({ connection, microphone, speaker, thread, orb, view });

// MARK: - Rendering

function render() {
  renderStatus();
  renderBanner();
  const holding = conversation.hold !== null;
  talkButton.setAttribute("aria-pressed", String(holding));
  talkButton.classList.toggle("holding", holding);
  talkButton.classList.toggle("hands-free", conversation.handsFree);
  talkButton.setAttribute("aria-disabled", String(microphone.state !== "open"));
  talkButton.setAttribute("aria-label", conversation.handsFree ? "Stop the agent" : "Hold to talk");
  handsFreeSwitch.setAttribute("aria-checked", String(conversation.handsFree));
  sendButton.disabled = composer.value.trim() === "" || !connection.isOpen;
  if (!hintTimer) talkHint.textContent = restingHint();
  document.body.dataset.activity = statusLine.state;
}

function renderStatus() {
  switch (connectionInfo.state) {
    case ConnectionState.open:
      statusLine.set(conversation.activity, conversation.handsFree && conversation.activity === "ready" ? "just talk" : "");
      break;
    case ConnectionState.connecting:
      statusLine.set("connecting", connectionInfo.detail.reconnecting ? "reconnecting" : "");
      break;
    case ConnectionState.waiting:
      statusLine.set("offline", `retrying in ${secondsUntil(connectionInfo.detail.retryAt)} s`);
      break;
    case ConnectionState.blocked:
      statusLine.set("blocked");
      break;
  }
}

function renderBanner() {
  const { state, detail } = connectionInfo;
  clearInterval(countdownTimer);
  if (state === ConnectionState.waiting) {
    const seconds = secondsUntil(detail.retryAt);
    const message = {
      closed: `Lost the connection to Parley (the server may be restarting). Reconnecting in ${seconds} s…`,
      "rate-limited": `The server is limiting new connections from this address. Retrying in ${seconds} s…`,
    }[detail.reason] ?? `Can't reach the Parley server. Retrying in ${seconds} s…`;
    banner.show(message, { label: "Retry now", run: () => connection.retryNow() });
    countdownTimer = setInterval(render, 1000);
  } else if (state === ConnectionState.blocked) {
    const reason = detail.message ? ` The server said: “${detail.message}”` : "";
    banner.show(
      "This page needs a client token from your app's backend: this Parley server does not hand out "
      + `local tokens (${detail.code}).${reason}`,
    );
  } else if (state === ConnectionState.open || !lostConnection) {
    banner.hide();
  }
}

function secondsUntil(time) {
  return Math.max(0, Math.ceil((time - Date.now()) / 1000));
}

function showHint(text) {
  talkHint.textContent = text;
  talkHint.classList.add("hint-attention");
  clearTimeout(hintTimer);
  hintTimer = setTimeout(() => {
    hintTimer = 0;
    talkHint.classList.remove("hint-attention");
    talkHint.textContent = restingHint();
  }, 2500);
}

function restingHint() {
  if (microphone.state === "failed") return NO_MICROPHONE_HINT;
  return conversation.handsFree ? HANDS_FREE_HINT : TALK_HINT;
}

// MARK: - Controls

talkButton.addEventListener("pointerdown", (event) => {
  if (event.pointerType === "mouse" && event.button !== 0) return;
  event.preventDefault();
  try {
    talkButton.setPointerCapture(event.pointerId);
  } catch {
    // The pointer is already up (a very quick tap): the release on the window still ends it.
  }
  conversation.pressTalk(`pointer-${event.pointerId}`, event.timeStamp);
});
// Listened for on the window: the release counts wherever the pointer is when it lifts.
addEventListener("pointerup", (event) => conversation.releaseTalk(`pointer-${event.pointerId}`));
addEventListener("pointercancel", (event) => {
  if (conversation.hold?.source === `pointer-${event.pointerId}`) conversation.abandonTalk();
});
talkButton.addEventListener("contextmenu", (event) => event.preventDefault());
talkButton.addEventListener("click", (event) => event.preventDefault());

document.addEventListener("keydown", (event) => {
  if (event.code !== "Space" || event.altKey || event.ctrlKey || event.metaKey || !spaceTalks(event.target)) return;
  event.preventDefault();
  if (!event.repeat) conversation.pressTalk("key", event.timeStamp);
});
document.addEventListener("keyup", (event) => {
  if (event.code !== "Space" || conversation.hold?.source !== "key") return;
  event.preventDefault();
  conversation.releaseTalk("key");
});

/** Space holds to talk unless the focus is somewhere space means something else. */
function spaceTalks(target) {
  if (!(target instanceof Element) || target === talkButton || talkButton.contains(target)) return true;
  return !target.closest("input, textarea, select, button, a, [contenteditable], [role=switch]");
}

addEventListener("blur", () => conversation.abandonTalk());
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "hidden") conversation.abandonTalk();
  else connection.retryNow();
});
addEventListener("pointerdown", resumeAudio, { capture: true });
addEventListener("keydown", resumeAudio, { capture: true });

handsFreeSwitch.addEventListener("click", () => conversation.setHandsFree(!conversation.handsFree));

composer.addEventListener("input", render);
composerForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = composer.value.trim();
  if (text === "") return;
  if (conversation.sendText(text)) composer.value = "";
  render();
});

navigator.permissions?.query({ name: "microphone" }).then((permission) => {
  permission.addEventListener("change", () => {
    if (permission.state !== "denied" && microphone.state !== "open") microphone.open();
  });
}).catch(() => {});

// MARK: - Debug surface

const parleyDebug = Object.freeze({
  get connection() { return connection.state; },
  get sessionId() { return conversation.sessionId; },
  get mode() { return conversation.handsFree ? "hands-free" : "hold-to-talk"; },
  get transport() { return connection.transport; },
  get turnDetection() { return conversation.turnDetection; },
  get microphone() { return microphone.state; },
  get microphoneProblem() { return microphone.problem; },
  get holding() { return conversation.hold !== null; },
  get capturing() { return microphone.capturing; },
  get pressToGateMs() { return microphone.startLatencyMs; },
  get pressAudioMissedMs() { return microphone.startMissedMs; },
  get micLevel() { return microphone.level; },
  get micSeconds() { return microphone.seconds; },
  get chunksSent() { return conversation.chunksSent; },
  get audioChunksReceived() { return speaker.chunksReceived; },
  get audioChunksPlayed() { return speaker.chunksPlayed; },
  get samplesPlayed() { return speaker.samplesPlayed; },
  get playing() { return speaker.playing; },
  get status() { return statusLine.state; },
  get eventCounts() { return { ...conversation.eventCounts }; },
  get lastTruncate() { return conversation.lastTruncate && { ...conversation.lastTruncate }; },
  get lastError() { return conversation.lastError && { ...conversation.lastError }; },
  get lastTurnMetrics() { return conversation.lastTurnMetrics; },
  /** On a WebRTC call, what its audio track has brought in (a promise; null on a WebSocket). */
  callAudio() { return connection.callAudioReceived(); },
  /** Every field above as one plain object. */
  snapshot() {
    const descriptors = Object.getOwnPropertyDescriptors(parleyDebug);
    const fields = Object.keys(descriptors).filter((key) => descriptors[key].get);
    return Object.fromEntries(fields.map((key) => [key, parleyDebug[key]]));
  },
});
Object.defineProperty(window, "parleyDebug", { value: parleyDebug, enumerable: true });

// MARK: - Start

render();
speaker.prepare().catch((error) => thread.addNotice(`Audio playback is unavailable: ${error.message}`, "error"));
microphone.open();
connection.start();
new EnginesLine(document.getElementById("engines")).load();
