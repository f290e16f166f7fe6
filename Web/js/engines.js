// The line under the dock that says which engines answer: speech-to-text, the language model
// and text-to-speech, from GET /v1/status, with the languages each hears or speaks and the
// server's one note about them (with the embedded demo model: how to plug in a real one).
// Quiet when the server does not say.

const SHOWN_ROLES = ["speech-to-text", "language model", "text-to-speech"];
const RETRY_MS = 2000;
// Up to this many languages are named on the line; more are counted there and named in its tooltip.
const LANGUAGES_NAMED = 4;

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
    const engines = SHOWN_ROLES.flatMap((role) => status.providers.filter((engine) => engine.role === role));
    if (engines.length === 0) return;
    this.element.textContent = engines.map(describe).join(" · ") + (status.notice ? ` — ${status.notice}` : "");
    this.element.title = engines
      .filter((engine) => engine.languages?.length)
      .map((engine) => `${engine.name}: ${engine.languages.join(", ")}`)
      .join("\n");
    this.element.hidden = false;
  }
}

/** An engine's name with its languages: named when few, counted when many. */
function describe(engine) {
  const languages = engine.languages ?? [];
  if (languages.length === 0) return engine.name;
  const said = languages.length <= LANGUAGES_NAMED ? languages.join(", ") : `${languages.length} languages`;
  return `${engine.name} (${said})`;
}
