// The one chat thread: user and agent messages, tool progress lines and notices, keyed so that
// server events can refine them (user text replaced, agent text appended, agent text cut).

const STICK_TO_BOTTOM_PX = 80;

/** Renders the conversation into the thread element. */
export class Thread {
  constructor(container, placeholder) {
    this.container = container;
    this.placeholder = placeholder;
    this.messages = new Map();
    this.toolLines = new Map();
  }

  /** Whether a message with this key is shown. */
  has(key) {
    return this.messages.has(key);
  }

  /** Gives a message a new key, e.g. the server's item id once it is known. */
  rekey(oldKey, newKey) {
    const message = this.messages.get(oldKey);
    if (!message || this.messages.has(newKey)) return;
    this.messages.delete(oldKey);
    this.messages.set(newKey, message);
    message.element.dataset.itemId = newKey;
  }

  /** Adds a user message, still being transcribed unless `done`. */
  addUser(key, text, { done = false } = {}) {
    const message = this.add(key, "user", "You");
    message.text.textContent = text;
    message.text.classList.toggle("placeholder-text", text === "");
    if (done) this.setState(message, "done");
    return message;
  }

  /** Replaces a user message's text with a newer transcript. */
  setUserText(key, text) {
    const message = this.messages.get(key);
    if (!message || message.element.dataset.state !== "streaming") return;
    this.updating(() => {
      message.text.textContent = text;
      message.text.classList.toggle("placeholder-text", text === "");
    });
  }

  /** Sets a user message's final transcript. */
  finishUser(key, text, emptyText = "(nothing heard)") {
    const message = this.messages.get(key);
    if (!message) return;
    this.updating(() => {
      const heard = text.trim() !== "";
      message.text.textContent = heard ? text : emptyText;
      message.text.classList.toggle("placeholder-text", !heard);
      this.setState(message, "done");
    });
  }

  /** Adds an agent message that will stream in. */
  addAgent(key) {
    if (this.messages.has(key)) return this.messages.get(key);
    return this.add(key, "agent", "Parley");
  }

  /** Appends streamed text to an agent message. */
  appendAgent(key, delta) {
    const message = this.messages.get(key);
    if (!message || message.element.dataset.state !== "streaming") return;
    this.updating(() => message.text.append(delta));
  }

  /** The text shown for a message (for an agent message: received so far, up to any cut). */
  text(key) {
    return this.messages.get(key)?.text.textContent ?? "";
  }

  /** Replaces an agent message's text (the final transcript from the server). */
  setAgentText(key, text) {
    const message = this.messages.get(key);
    if (!message || message.element.dataset.state !== "streaming") return;
    this.updating(() => { message.text.textContent = text; });
  }

  /** Marks a message complete, unless it was interrupted. */
  finish(key) {
    const message = this.messages.get(key);
    if (message && message.element.dataset.state === "streaming") this.setState(message, "done");
  }

  /**
   * Shows where an agent message was cut: the heard part, then the unheard part struck out.
   * Called again (with the server's heard text) it moves the cut.
   */
  interrupt(key, heardLength) {
    const message = this.messages.get(key);
    if (!message) return;
    this.updating(() => {
      message.fullText ??= message.text.textContent;
      const full = message.fullText;
      const cut = Math.max(0, Math.min(full.length, heardLength ?? full.length));
      message.text.textContent = full.slice(0, cut);
      message.bubble.querySelectorAll(".message-unheard, .cut-marker").forEach((node) => node.remove());
      if (cut < full.length) {
        const unheard = document.createElement("span");
        unheard.className = "message-unheard";
        unheard.textContent = full.slice(cut);
        message.bubble.append(unheard);
      }
      const marker = document.createElement("span");
      marker.className = "cut-marker";
      marker.textContent = "interrupted";
      message.bubble.append(marker);
      this.setState(message, "interrupted");
    });
  }

  /** Whether the message was cut by an interruption. */
  isInterrupted(key) {
    return this.messages.get(key)?.element.dataset.state === "interrupted";
  }

  /** The full text of an agent message, including any part cut off as unheard. */
  fullAgentText(key) {
    const message = this.messages.get(key);
    return message?.fullText ?? message?.text.textContent ?? "";
  }

  /** Keys of agent messages still streaming. */
  streamingAgents() {
    return [...this.messages.entries()]
      .filter(([, message]) => message.role === "agent" && message.element.dataset.state === "streaming")
      .map(([key]) => key);
  }

  /** Adds a small progress line for a tool call. */
  addToolLine(callId, name) {
    const line = this.line("tool", `Using ${humanToolName(name)}…`);
    line.dataset.state = "running";
    this.toolLines.set(callId, { line, name });
  }

  /** Marks a tool call's line as finished or failed. */
  finishToolLine(callId, isError) {
    const entry = this.toolLines.get(callId);
    if (!entry) return;
    entry.line.dataset.state = isError ? "failed" : "done";
    entry.line.textContent = isError
      ? `${capitalize(humanToolName(entry.name))} failed`
      : `Used ${humanToolName(entry.name)}`;
    this.toolLines.delete(callId);
  }

  /** Adds a notice line (connection changes, errors) to the thread. */
  addNotice(text, tone = "info") {
    const line = this.line("notice", text);
    line.dataset.tone = tone;
  }

  add(key, role, label) {
    const element = document.createElement("article");
    element.className = `message message-${role}`;
    element.dataset.role = role;
    element.dataset.itemId = key;
    element.setAttribute("aria-label", label);
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    const text = document.createElement("span");
    text.className = "message-text";
    bubble.append(text);
    element.append(bubble);
    const message = { role, element, bubble, text };
    this.setState(message, "streaming");
    this.messages.set(key, message);
    this.updating(() => this.container.append(element));
    return message;
  }

  line(role, text) {
    const line = document.createElement("p");
    line.className = `thread-line thread-${role}`;
    line.dataset.role = role;
    line.textContent = text;
    this.updating(() => this.container.append(line));
    return line;
  }

  setState(message, state) {
    message.element.dataset.state = state;
    message.element.setAttribute("aria-busy", state === "streaming" ? "true" : "false");
  }

  /** Runs a DOM change and keeps the newest message in view if the reader was at the bottom. */
  updating(change) {
    const { container } = this;
    const atBottom = container.scrollHeight - container.scrollTop - container.clientHeight < STICK_TO_BOTTOM_PX;
    this.placeholder.hidden = true;
    change();
    if (atBottom) container.scrollTop = container.scrollHeight;
  }
}

function humanToolName(name) {
  return String(name ?? "a tool").replaceAll("_", " ");
}

function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
