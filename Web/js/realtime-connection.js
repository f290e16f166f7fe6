// The realtime connection: a short-lived client token from the server, a WebRTC call (the
// default; `?transport=websocket` forces the WebSocket) falling back to a WebSocket with the
// browser subprotocol when this browser has no WebRTC or the call cannot be set up, and
// reconnection with backoff when the server is unreachable or restarts.

import { AGENT_QUERY, CallSocket } from "./call-socket.js";

// Where tokens come from: the local user's endpoint, unless the page names its app's backend
// (`<meta name="parley-token-url" content="https://app.example.com/parley-token">`), which
// answers like `POST /v1/realtime/client_secrets`: `{"value": …, "expires_at": …}`.
const TOKEN_PATH = document.querySelector('meta[name="parley-token-url"]')?.content || "/v1/local/token";
// Parley's own events (live transcript replacements, tool progress, turn metrics) are opt-in.
const REALTIME_PATH = `/v1/realtime?parley_events=true${AGENT_QUERY}`;
const TOKEN_REFRESH_MARGIN_SECONDS = 60;
const BACKOFF_SECONDS = [0.5, 1, 2, 4, 8, 15];
const RECENT_EVENT_MEMORY = 64;
const SESSION_START_TIMEOUT_MS = 10000;

/** Connection states, as reported to `onStateChange`. */
export const ConnectionState = Object.freeze({
  connecting: "connecting",
  open: "open",
  waiting: "waiting",
  blocked: "blocked",
});

/** Raised when the server refuses to mint a token for this page. */
class TokenRefused extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Raised when the server asks the page to slow down its token requests. */
class TokenRateLimited extends Error {}

/** Keeps one realtime session open, reconnecting as needed, and hands every server event on. */
export class RealtimeConnection {
  /**
   * @param {{onEvent(event: object): void, onOpen(): void, onClose(): void,
   *          onStateChange(state: string, detail: object): void}} handlers
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.state = ConnectionState.connecting;
    this.socket = null;
    this.token = null;
    this.failures = 0;
    this.everOpened = false;
    this.retryTimer = null;
    this.refreshTimer = null;
    this.nextEventNumber = 1;
    this.recentEvents = new Map();
    this.triesCall = new URLSearchParams(location.search).get("transport") !== "websocket" && CallSocket.supported;
    this.microphone = null;
    this.iceServers = [];
    addEventListener("online", () => this.retryNow());
  }

  /** Starts connecting (and keeps doing so until a session is open). */
  start() {
    this.connect();
  }

  /** Skips the remaining backoff wait. */
  retryNow() {
    if (this.state !== ConnectionState.waiting) return;
    clearTimeout(this.retryTimer);
    this.connect();
  }

  /** Whether events can be sent now. */
  get isOpen() {
    return this.state === ConnectionState.open;
  }

  /**
   * Sends a client event with a fresh `event_id`.
   * @returns {boolean} false when the connection is not open (the event is dropped)
   */
  send(event) {
    if (!this.isOpen || this.socket?.readyState !== WebSocket.OPEN) return false;
    const eventId = `evt_web_${this.nextEventNumber}`;
    this.nextEventNumber += 1;
    this.recentEvents.set(eventId, event.type);
    if (this.recentEvents.size > RECENT_EVENT_MEMORY) {
      this.recentEvents.delete(this.recentEvents.keys().next().value);
    }
    this.socket.send(JSON.stringify({ event_id: eventId, ...event }));
    return true;
  }

  /** "webrtc" when the session is a WebRTC call (audio on its track), else "websocket". */
  get transport() {
    return this.socket instanceof CallSocket ? "webrtc" : "websocket";
  }

  /** Whether the microphone's audio goes on a call's track rather than in events. */
  get carriesAudio() {
    return this.isOpen && this.socket instanceof CallSocket;
  }

  /** The microphone's stream, for calls (now and later ones). */
  attachMicrophone(stream) {
    this.microphone = stream;
    if (this.socket instanceof CallSocket) this.socket.attachMicrophone(stream);
  }

  /** Opens or closes the microphone on a call (a WebSocket session has nothing to open). */
  setMicrophoneOpen(open) {
    if (this.socket instanceof CallSocket) this.socket.setMicrophoneOpen(open);
  }

  /** What the call's audio track has brought in so far (see `CallSocket.receivedAudio`); null on a WebSocket. */
  async callAudioReceived() {
    return this.socket instanceof CallSocket ? this.socket.receivedAudio() : null;
  }

  /** The type of a recently sent event, to explain which request an error answers. */
  sentEventType(eventId) {
    return this.recentEvents.get(eventId) ?? null;
  }

  async connect() {
    this.setState(ConnectionState.connecting, { reconnecting: this.everOpened });
    let token;
    try {
      token = await this.freshToken();
    } catch (error) {
      if (error instanceof TokenRefused) {
        this.setState(ConnectionState.blocked, { code: error.code, message: error.message });
      } else if (error instanceof TokenRateLimited) {
        this.scheduleRetry("rate-limited");
      } else {
        this.scheduleRetry("unreachable");
      }
      return;
    }
    let socket;
    try {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      socket = this.triesCall
        ? new CallSocket(token, this.microphone, this.iceServers)
        : new WebSocket(`${scheme}//${location.host}${REALTIME_PATH}`, ["realtime", `openai-insecure-api-key.${token}`]);
    } catch {
      // This browser cannot make the call after all: the WebSocket it is.
      this.triesCall = false;
      this.scheduleRetry("unreachable");
      return;
    }
    this.socket = socket;
    let opened = false;
    const startTimer = setTimeout(() => socket.close(), SESSION_START_TIMEOUT_MS);
    socket.onopen = () => {
      opened = true;
    };
    socket.onmessage = (message) => this.receive(message.data, () => {
      clearTimeout(startTimer);
      this.failures = 0;
      this.everOpened = true;
      this.setState(ConnectionState.open, {});
      this.handlers.onOpen();
    });
    socket.onclose = () => {
      clearTimeout(startTimer);
      if (this.socket !== socket) return;
      this.socket = null;
      const wasOpen = this.state === ConnectionState.open;
      // A call the server answered that never opened: WebRTC is not getting through (or the
      // server refused it), the WebSocket takes over. An unreachable server is tried again as is.
      if (!opened && socket instanceof CallSocket && socket.reachedServer) this.triesCall = false;
      if (!opened) this.token = null;
      if (wasOpen) this.handlers.onClose();
      this.scheduleRetry(wasOpen ? "closed" : "unreachable");
    };
  }

  receive(data, onSessionCreated) {
    if (typeof data !== "string") {
      this.handlers.onEvent({ type: "parley.web.unreadable", reason: "binary message" });
      return;
    }
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      this.handlers.onEvent({ type: "parley.web.unreadable", reason: "not JSON" });
      return;
    }
    if (!event || typeof event.type !== "string") {
      this.handlers.onEvent({ type: "parley.web.unreadable", reason: "no event type" });
      return;
    }
    if (event.type === "session.created" && this.state !== ConnectionState.open) onSessionCreated();
    this.handlers.onEvent(event);
  }

  async freshToken() {
    const now = Date.now() / 1000;
    if (this.token && this.token.expiresAt - now > TOKEN_REFRESH_MARGIN_SECONDS) return this.token.value;
    // A backend of the app's own origin recognises its signed-in user by their cookies.
    const response = await fetch(TOKEN_PATH, { method: "POST", cache: "no-store", credentials: "include" });
    const body = await response.json().catch(() => null);
    if (response.status === 403 || response.status === 401) {
      throw new TokenRefused(body?.error?.code ?? "token_refused", body?.error?.message ?? "");
    }
    if (response.status === 429) throw new TokenRateLimited();
    if (!response.ok || typeof body?.value !== "string") throw new Error(`token request failed: ${response.status}`);
    const expiresAt = Number.isFinite(body.expires_at) ? body.expires_at : now + 600;
    this.token = { value: body.value, expiresAt };
    // STUN and TURN servers for calls, when the server names any (PARLEY_WEBRTC_ICE_SERVERS).
    this.iceServers = Array.isArray(body.ice_servers) ? body.ice_servers : [];
    this.scheduleTokenRefresh(expiresAt - now);
    return body.value;
  }

  /** Fetches the next token shortly before this one expires, so a reconnect never waits on it. */
  scheduleTokenRefresh(secondsLeft) {
    clearTimeout(this.refreshTimer);
    const delay = Math.max(5, secondsLeft - TOKEN_REFRESH_MARGIN_SECONDS) * 1000;
    this.refreshTimer = setTimeout(() => {
      this.token = null;
      this.freshToken().catch(() => {});
    }, delay);
  }

  scheduleRetry(reason) {
    const base = BACKOFF_SECONDS[Math.min(this.failures, BACKOFF_SECONDS.length - 1)];
    this.failures += 1;
    const seconds = base * (0.8 + Math.random() * 0.4);
    const retryAt = Date.now() + seconds * 1000;
    this.setState(ConnectionState.waiting, { reason, retryAt, attempt: this.failures });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), seconds * 1000);
  }

  setState(state, detail) {
    this.state = state;
    this.handlers.onStateChange(state, detail);
  }
}
