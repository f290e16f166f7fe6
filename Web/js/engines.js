// The line under the dock that says which engines answer: speech-to-text, the language model
// and text-to-speech, from GET /v1/status, with the server's one note about them (with the
// embedded demo model: how to plug in a real one). Quiet when the server does not say.

const SHOWN_ROLES = ["speech-to-text", "language model", "text-to-speech"];
const RETRY_MS = 2000;

export class EnginesLine {
  constructor(element) {
    this.element = element;
  }

  /** Fetches the status until the server has its engines, then shows them. */
  async load() {
    for (;;) {
      try {
        const response = await fetch("/v1/status", { cache: "no-store" });
        const status = await response.json();
        if (response.ok && status.status === "ok") {
          this.show(status);
          return;
        }
      } catch {
        // The server is not reachable yet; the connection status already says so.
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  show(status) {
    const names = SHOWN_ROLES.flatMap((role) => status.providers.filter((engine) => engine.role === role).map((engine) => engine.name));
    if (names.length === 0) return;
    this.element.textContent = names.join(" · ") + (status.notice ? ` — ${status.notice}` : "");
    this.element.hidden = false;
  }
}
