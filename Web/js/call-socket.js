// A WebRTC call to /v1/realtime/calls shaped like a WebSocket (readyState, send, close, onopen,
// onmessage, onclose), so the realtime connection runs the same on either transport. The
// microphone goes out on the call's audio track, open only while the person talks (hold or
// hands-free); the agent's speech comes back on it and plays through an <audio> element, with
// the browser's echo cancellation using it as the far end.

// The page's `?agent=<id>` (the console's "talk to this agent") names the agent to talk to.
const requestedAgent = new URLSearchParams(location.search).get("agent");
/** The query naming the agent the page talks to, to follow Parley's own parameters. */
export const AGENT_QUERY = requestedAgent ? `&agent=${encodeURIComponent(requestedAgent)}` : "";
const CALLS_PATH = `/v1/realtime/calls?parley_events=true${AGENT_QUERY}`;
const GATHERING_TIMEOUT_MS = 3000;

/** One call; closes (once) when the call fails, ends or is closed. */
export class CallSocket {
  /** Whether this browser can make WebRTC calls. */
  static get supported() {
    return typeof RTCPeerConnection !== "undefined";
  }

  /**
   * @param {string} token a client token
   * @param {MediaStream|null} microphone the microphone's stream, if it is open already
   * @param {RTCIceServer[]} iceServers STUN and TURN servers to reach the server through
   */
  constructor(token, microphone, iceServers = []) {
    this.readyState = 0;
    /** Whether the server answered the offer at all (a call that fails after that is WebRTC's failure, not the server's absence). */
    this.reachedServer = false;
    this.onopen = null;
    this.onmessage = null;
    this.onclose = null;
    this.track = null;
    this.microphoneOpen = false;
    this.audio = new Audio();
    this.audio.autoplay = true;
    this.pc = new RTCPeerConnection({ iceServers });
    this.sender = this.pc.addTransceiver("audio", { direction: "sendrecv" }).sender;
    this.channel = this.pc.createDataChannel("oai-events");
    this.channel.onopen = () => {
      this.readyState = 1;
      this.onopen?.();
    };
    this.channel.onmessage = (message) => this.onmessage?.({ data: message.data });
    this.channel.onclose = () => this.finish();
    this.pc.onconnectionstatechange = () => {
      if (this.pc.connectionState === "failed" || this.pc.connectionState === "closed") this.finish();
    };
    this.pc.ontrack = (event) => {
      this.audio.srcObject = event.streams[0] ?? new MediaStream([event.track]);
      this.audio.play().catch(() => {});
    };
    if (microphone) this.attachMicrophone(microphone);
    this.start(token).catch(() => this.finish());
  }

  async start(token) {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    await new Promise((resolve) => {
      if (this.pc.iceGatheringState === "complete") return resolve();
      setTimeout(resolve, GATHERING_TIMEOUT_MS);
      this.pc.addEventListener("icegatheringstatechange", () => {
        if (this.pc.iceGatheringState === "complete") resolve();
      });
    });
    const response = await fetch(CALLS_PATH, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/sdp" },
      body: this.pc.localDescription.sdp,
    });
    this.reachedServer = true;
    if (response.status !== 201) throw new Error(`the server answered ${response.status}`);
    await this.pc.setRemoteDescription({ type: "answer", sdp: await response.text() });
  }

  /** Sends the microphone's audio on the call (a copy of its track, muted until opened). */
  attachMicrophone(stream) {
    const track = stream.getAudioTracks()[0];
    if (!track || this.readyState === 3) return;
    this.track = track.clone();
    this.track.enabled = this.microphoneOpen;
    this.sender.replaceTrack(this.track).catch(() => {});
  }

  /** Opens or closes the microphone on the call (closed, the track sends silence). */
  setMicrophoneOpen(open) {
    this.microphoneOpen = open;
    if (this.track) this.track.enabled = open;
  }

  /**
   * What the browser has received and decoded on the call's audio track so far, from its WebRTC
   * statistics: samples, and their energy (the sum of level² × seconds).
   * @returns {Promise<{samples: number, energy: number}>}
   */
  async receivedAudio() {
    for (const report of (await this.pc.getStats()).values()) {
      if (report.type === "inbound-rtp" && report.kind === "audio") {
        return { samples: report.totalSamplesReceived ?? 0, energy: report.totalAudioEnergy ?? 0 };
      }
    }
    return { samples: 0, energy: 0 };
  }

  send(text) {
    this.channel.send(text);
  }

  close() {
    this.finish();
  }

  finish() {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.track?.stop();
    this.audio.srcObject = null;
    this.pc.close();
    this.onclose?.();
  }
}
