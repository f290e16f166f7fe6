// What the page tells the person about its own state: the status line, the connection banner and
// the microphone help panel.

import { MicrophoneProblem } from "./microphone.js";

/** Status words, keyed by the `data-state` of the status line. */
export const StatusText = Object.freeze({
  connecting: "Connecting…",
  ready: "Ready",
  listening: "Listening…",
  thinking: "Thinking…",
  speaking: "Speaking",
  offline: "Offline",
  blocked: "Needs a token",
});

/** The status line at the top: one state word, optionally with a short detail. */
export class StatusLine {
  constructor(element) {
    this.element = element;
    this.text = element.querySelector(".status-text");
    this.state = element.dataset.state;
  }

  /** Shows `state` (a key of StatusText) with an optional detail after it. */
  set(state, detail = "") {
    const text = detail ? `${StatusText[state]} — ${detail}` : StatusText[state];
    if (this.state === state && this.text.textContent === text) return;
    this.state = state;
    this.element.dataset.state = state;
    this.text.textContent = text;
  }
}

/** A banner under the top bar for problems that need more words than the status line. */
export class Banner {
  constructor(element) {
    this.element = element;
  }

  /** Shows a message with an optional action button. */
  show(message, action) {
    this.element.replaceChildren(message);
    if (action) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "banner-action";
      button.textContent = action.label;
      button.addEventListener("click", action.run);
      this.element.append(" ", button);
    }
    this.element.hidden = false;
  }

  hide() {
    this.element.hidden = true;
    this.element.replaceChildren();
  }
}

const MICROPHONE_HELP = Object.freeze({
  [MicrophoneProblem.denied]:
    "Parley isn't allowed to use your microphone. To talk, click the lock or site-settings icon next to "
    + "the address bar, set Microphone to Allow, then press Try again (or reload). Typing keeps working.",
  [MicrophoneProblem.missing]:
    "No microphone was found. Plug one in or pick one in your system's sound settings, then press "
    + "Try again. Typing keeps working.",
  [MicrophoneProblem.busy]:
    "The microphone is in use by another app or can't be started. Close the other app, then press "
    + "Try again. Typing keeps working.",
  [MicrophoneProblem.insecure]:
    "Browsers only allow the microphone on https:// pages or on localhost. Open Parley through "
    + "http://127.0.0.1 or over https. Typing keeps working.",
  [MicrophoneProblem.unsupported]:
    "This browser can't capture audio the way Parley needs (AudioWorklet). Try a current Chrome, "
    + "Edge, Firefox or Safari. Typing keeps working.",
  [MicrophoneProblem.failed]: "The microphone stopped working. Press Try again. Typing keeps working.",
});

/** The panel that explains why the microphone is unavailable and how to allow it. */
export class MicrophoneHelp {
  constructor(panel, text, retryButton, onRetry) {
    this.panel = panel;
    this.text = text;
    retryButton.addEventListener("click", onRetry);
  }

  /** Explains `problem` (a MicrophoneProblem); `detail` is the browser's own words, if any. */
  show(problem, detail) {
    this.text.textContent = MICROPHONE_HELP[problem] ?? MICROPHONE_HELP[MicrophoneProblem.failed];
    if (problem === MicrophoneProblem.failed && detail) this.text.textContent += ` (${detail})`;
    this.panel.hidden = false;
  }

  /** Draws attention to the panel again (a press on the disabled talk button). */
  nudge() {
    if (this.panel.hidden) return;
    this.panel.classList.remove("nudge");
    void this.panel.offsetWidth;
    this.panel.classList.add("nudge");
  }

  hide() {
    this.panel.hidden = true;
  }
}
