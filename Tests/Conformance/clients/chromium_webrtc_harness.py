"""Parley's WebRTC calls from headless Chromium (the browser people use), with a fake microphone.

Run as `python chromium_webrtc_harness.py --url http://HOST:PORT --token TOKEN --wav speech.wav`;
the fake microphone loops the WAV (a request for a long answer, then a few seconds of silence).
The page makes a call the way OpenAI's browser clients do (getUserMedia with echo cancellation,
noise suppression and auto gain; an `oai-events` data channel; the offer POSTed to
/v1/realtime/calls) and the script checks: the question is heard, the answer is spoken
(`output_audio_buffer.started`, Opus packets arriving on the track), and when the loop asks
again over the answer, the barge-in stops the outgoing audio at once (`output_audio_buffer.cleared`,
the response cancelled). Then the page floods the data channel (3,000 events at once): the flood is
refused with an error and a later event is still answered. Prints `ok chromium` or
`FAIL chromium: reason`.

With --relay, the call is the web page's own (its CallSocket, with the STUN/TURN servers the
server hands over with the local token) and may only go through a TURN relay (as behind a NAT that
lets nothing else through): the question is heard, the answer arrives on the track, and the call's
candidate pair is a relayed one. Prints `ok chromium relayed`.
"""
import argparse
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CALL = """
const [token, done] = [arguments[0], arguments[arguments.length - 1]];
(async () => {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
  const pc = new RTCPeerConnection();
  pc.addTrack(stream.getAudioTracks()[0], stream);
  const events = [];
  const channel = pc.createDataChannel("oai-events");
  channel.onmessage = (message) => events.push(JSON.parse(message.data));
  pc.ontrack = (event) => {
    const audio = new Audio();
    audio.srcObject = event.streams[0] || new MediaStream([event.track]);
    audio.play().catch(() => {});
  };
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === "complete") return resolve();
    pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && resolve());
  });
  const response = await fetch("/v1/realtime/calls", { method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/sdp" }, body: pc.localDescription.sdp });
  const answer = await response.text();
  if (response.status !== 201) return done({ error: `${response.status} ${answer}` });
  await pc.setRemoteDescription({ type: "answer", sdp: answer });
  window.parleyCall = { pc, events, channel };
  done({ location: response.headers.get("Location") });
})().catch((error) => done({ error: String(error) }));
"""

RELAYED_CALL = """
const done = arguments[arguments.length - 1];
(async () => {
  const token = await (await fetch("/v1/local/token", { method: "POST" })).json();
  if (!token.ice_servers) return done({ error: "the token came without ice_servers" });
  // Relay only, as behind a NAT that lets nothing else through.
  const Original = RTCPeerConnection;
  window.RTCPeerConnection = function (configuration) { return new Original({ ...configuration, iceTransportPolicy: "relay" }); };
  const { CallSocket } = await import("/js/call-socket.js");
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
  const events = [];
  const socket = new CallSocket(token.value, stream, token.ice_servers);
  socket.onmessage = (message) => events.push(JSON.parse(message.data));
  socket.onclose = () => done({ error: "the call closed" });
  socket.onopen = () => {
    socket.setMicrophoneOpen(true);
    window.parleyCall = { pc: socket.pc, events };
    done({ servers: socket.pc.getConfiguration().iceServers.length });
  };
})().catch((error) => done({ error: String(error) }));
"""

SELECTED_PAIR_TYPE = """
const done = arguments[arguments.length - 1];
window.parleyCall.pc.getStats().then((stats) => {
  let type = null;
  stats.forEach((report) => {
    if (report.type === "candidate-pair" && report.nominated && report.state === "succeeded") {
      type = stats.get(report.localCandidateId)?.candidateType ?? type;
    }
  });
  done(type);
});
"""

INBOUND_PACKETS = """
const done = arguments[arguments.length - 1];
window.parleyCall.pc.getStats().then((stats) => {
  let packets = 0;
  stats.forEach((report) => { if (report.type === "inbound-rtp" && report.kind === "audio") packets += report.packetsReceived; });
  done(packets);
});
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--wav", required=True)
    parser.add_argument("--relay", action="store_true", help="the page's own call, through a TURN relay only")
    options = parser.parse_args()
    chrome = Options()
    chrome.binary_location = os.environ.get("PARLEY_CHROMIUM", "/usr/bin/chromium")
    for argument in [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--autoplay-policy=no-user-gesture-required", "--use-fake-device-for-media-stream",
        "--use-fake-ui-for-media-stream", f"--use-file-for-fake-audio-capture={options.wav}",
        # Loopback only: let ICE use it, and show the host address rather than an mDNS name.
        "--allow-loopback-in-peer-connection", "--disable-features=WebRtcHideLocalIpsWithMdns",
    ]:
        chrome.add_argument(argument)
    driver = webdriver.Chrome(service=Service(os.environ.get("PARLEY_CHROMEDRIVER", "/usr/bin/chromedriver")), options=chrome)
    try:
        driver.set_script_timeout(30)
        driver.get(options.url + "/")
        started = driver.execute_async_script(RELAYED_CALL if options.relay else CALL, options.token)
        assert "error" not in started, started["error"] if "error" in started else started

        def events():
            return driver.execute_script("return window.parleyCall.events;")

        def wait_for(describe, predicate, seconds=90):
            deadline = time.time() + seconds
            while time.time() < deadline:
                found = predicate(events())
                if found:
                    return found
                time.sleep(0.2)
            raise AssertionError(f"no {describe} within {seconds} s; got {[e.get('type') for e in events()]}")

        heard = wait_for("transcript", lambda es: next((e for e in es if e["type"] == "conversation.item.input_audio_transcription.completed"), None))
        print(f"heard: {heard.get('transcript')}", flush=True)
        playing = wait_for("output_audio_buffer.started", lambda es: next((e for e in es if e["type"] == "output_audio_buffer.started"), None))
        wait_for("answer audio on the track", lambda _: driver.execute_async_script(INBOUND_PACKETS) > 25, seconds=20)
        if options.relay:
            pair = driver.execute_async_script(SELECTED_PAIR_TYPE)
            assert pair == "relay", f"the call's local candidate is {pair}, not a relayed one"
            print("ok chromium relayed", flush=True)
            return
        cleared = wait_for("output_audio_buffer.cleared (barge-in)", lambda es: next((e for e in es if e["type"] == "output_audio_buffer.cleared"), None))
        assert cleared["response_id"] == playing["response_id"], (cleared, playing)
        done = wait_for("the interrupted response's end", lambda es: next(
            (e for e in es if e["type"] == "response.done" and e["response"]["id"] == playing["response_id"]), None), seconds=20)
        assert done["response"]["status"] == "cancelled", done["response"]["status"]
        types = [e["type"] for e in events()]
        assert "error" not in types, [e for e in events() if e["type"] == "error"]
        assert "response.output_audio.delta" not in types, "audio came as events, not on the track"
        # A flood from the browser's own data channel is refused; the call keeps answering.
        driver.execute_script("""
for (let index = 0; index < 3000; index += 1) {
  window.parleyCall.channel.send(JSON.stringify({ type: "conversation.item.retrieve", item_id: `item_flood_${index}` }));
}""")
        wait_for("the flood's refusal", lambda es: next(
            (e for e in es if e["type"] == "error" and "per second" in e.get("error", {}).get("message", "")), None), seconds=30)
        mark = len(events())

        def updated(es):
            # Asked again at each look until the allowance (100 events a second) lets one through.
            driver.execute_script("""window.parleyCall.channel.send(JSON.stringify(
  { type: "session.update", session: { type: "realtime", instructions: "Still here." } }));""")
            return next((e for e in es[mark:] if e["type"] == "session.updated"), None)

        wait_for("session.updated after the flood", updated, seconds=30)
        print("ok chromium", flush=True)
    except BaseException as error:  # noqa: BLE001 - reported by name
        print(f"FAIL chromium: {type(error).__name__}: {error}", flush=True)
        sys.exit(1)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
