"""Parley's WebRTC calls driven by aiortc (PyPI) as an OpenAI-style WebRTC client.

Run as `python aiortc_harness.py --url http://HOST:PORT/v1/realtime/calls --token TOKEN
--secret SECRET --question question.wav --answer-out answer.wav SCENARIO...`; prints `ok NAME` or
`FAIL NAME: reason` per scenario, and exits non-zero when any failed. The answer's audio, as
received on the track, is written to --answer-out (24 kHz mono PCM16) for the caller to
transcribe; `heard: …` and `answer: …` lines give the transcripts the server sent.

Scenarios:
- spoken_question: the question is sent on the audio track; the answer comes back as events on
  the `oai-events` data channel and as Opus audio on the track.
- clear: `output_audio_buffer.clear` while the answer plays stops it at once.
- flood: thousands of events at once are refused with an error, and the call keeps working.
- no_audio: an offer with only a data channel is refused with 400.
- vanish: the peer's network goes away mid-call (its UDP sockets close, nothing more arrives);
  the server must end the call by itself (the caller checks that it did).
- hostile_neighbours: one call asks its question while, beside it, a malformed offer and one
  without audio are refused, another call floods its data channel, one peer gets through ICE
  and then sends garbage instead of DTLS, and one gets through ICE and never starts DTLS: the
  question is answered without an error, the flood is refused, and both half-open calls are
  ended by the server (their ICE checks go unanswered) once its setup time runs out.
- relayed: the call goes through a TURN relay only (the ICE servers given by --ice-servers, as the
  server hands them to its web page; no host candidates, as behind a NAT that lets nothing else
  through): the question is answered and the call's pair is a relayed one.
- typed_handoff: a typed question to an agent that hands off (the URL names the instance, with
  `parley_events=true`): the handoff is reported on the data channel, the session takes the other
  agent's settings and it answers on the same call; `handoff: FROM -> TO`, `tools: …` (the tools
  run, in order) and `answer: …` lines tell what happened.
- sideband: a backend joins the live call over `/v1/realtime?call_id=…` with the server secret,
  sees its events and steers it (a typed question answered on the call).
"""
import argparse
import asyncio
import fractions
import json
import os
import random
import socket
import sys
import time
import urllib.error
import urllib.request
import wave

import aioice.ice
from aioice import stun
import av
import numpy as np
import websockets
from aiortc import MediaStreamTrack, RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

# aioice leaves loopback out of its host candidates; the test runs on loopback only.
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"] if use_ipv4 else []

EVENT_SECONDS = 90
RATE = 48_000
FRAME = 960


class SpeakingTrack(MediaStreamTrack):
    """A microphone that sends silence, and an utterance when asked, paced at 20 ms frames."""

    kind = "audio"

    def __init__(self):
        super().__init__()
        self.queue = np.zeros(0, dtype=np.int16)
        self.timestamp = 0
        self.start = None

    def say(self, samples):
        self.queue = np.concatenate([self.queue, samples])

    async def recv(self):
        if self.start is None:
            self.start = time.time()
        wait = self.start + self.timestamp / RATE - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        chunk, self.queue = self.queue[:FRAME], self.queue[FRAME:]
        if len(chunk) < FRAME:
            chunk = np.concatenate([chunk, np.zeros(FRAME - len(chunk), dtype=np.int16)])
        frame = av.AudioFrame(format="s16", layout="mono", samples=FRAME)
        frame.planes[0].update(chunk.tobytes())
        frame.pts = self.timestamp
        frame.sample_rate = RATE
        frame.time_base = fractions.Fraction(1, RATE)
        self.timestamp += FRAME
        return frame


def read_wav(path):
    """A WAV file as mono int16 at 48 kHz."""
    with wave.open(path) as file:
        rate, channels = file.getframerate(), file.getnchannels()
        samples = np.frombuffer(file.readframes(file.getnframes()), dtype=np.int16)
    if channels > 1:
        samples = samples[::channels]
    positions = np.arange(0, len(samples), rate / RATE)
    return np.interp(positions, np.arange(len(samples)), samples).astype(np.int16)


class Call:
    """One call: the peer connection, its events and the audio received."""

    def __init__(self, options, configuration=None):
        self.options = options
        self.pc = RTCPeerConnection(configuration)
        self.microphone = SpeakingTrack()
        self.pc.addTrack(self.microphone)
        self.channel = self.pc.createDataChannel("oai-events")
        self.events = []
        self.waiters = []
        self.received = []
        self.channel.on("message", self.on_message)
        self.pc.on("track", self.on_track)
        self.location = None

    def on_message(self, message):
        event = json.loads(message)
        self.events.append(event)
        for waiter in list(self.waiters):
            predicate, future = waiter
            if predicate(event) and not future.done():
                future.set_result(event)
                self.waiters.remove(waiter)

    def on_track(self, track):
        async def pull():
            resampler = av.AudioResampler(format="s16", layout="mono", rate=24_000)
            while True:
                try:
                    frame = await track.recv()
                except MediaStreamError:
                    return
                for converted in resampler.resample(frame):
                    self.received.append(converted.to_ndarray().tobytes())

        asyncio.ensure_future(pull())

    async def next(self, event_type, predicate=lambda event: True, seconds=EVENT_SECONDS, after=0):
        for event in self.events[after:]:
            if event.get("type") == event_type and predicate(event):
                return event
        future = asyncio.get_running_loop().create_future()
        self.waiters.append((lambda event: event.get("type") == event_type and predicate(event), future))
        try:
            return await asyncio.wait_for(future, seconds)
        except asyncio.TimeoutError:
            raise AssertionError(f"no {event_type} within {seconds} s; got {[e.get('type') for e in self.events]}")

    async def connect(self):
        await self.pc.setLocalDescription(await self.pc.createOffer())
        status, headers, body = await post(self.options, self.pc.localDescription.sdp)
        assert status == 201, f"POST answered {status}: {body}"
        assert headers.get("Content-Type", "").startswith("application/sdp"), headers
        self.location = headers.get("Location")
        assert self.location and self.location.startswith("/v1/realtime/calls/"), f"Location: {self.location}"
        assert "Location" in headers.get("Access-Control-Expose-Headers", ""), "CORS does not expose Location"
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
        await self.next("session.created")

    def send(self, event):
        self.channel.send(json.dumps(event))

    async def close(self):
        await self.pc.close()


async def post(options, sdp):
    """POSTs an offer; the status, headers and body text."""

    def request():
        req = urllib.request.Request(options.url, data=sdp.encode(), method="POST", headers={
            "Authorization": f"Bearer {options.token}", "Content-Type": "application/sdp"})
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.status, dict(response.headers), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read().decode()

    return await asyncio.to_thread(request)


async def spoken_question(options):
    call = Call(options)
    try:
        await call.connect()
        call.microphone.say(read_wav(options.question))
        heard = await call.next("conversation.item.input_audio_transcription.completed")
        print(f"heard: {heard.get('transcript')}")
        done = await call.next("response.done")
        assert done["response"]["status"] == "completed", f"response ended {done['response']['status']}"
        started = await call.next("output_audio_buffer.started")
        assert started.get("response_id") == done["response"]["id"], started
        await call.next("output_audio_buffer.stopped", lambda e: e.get("response_id") == done["response"]["id"])
        types = [event.get("type") for event in call.events]
        assert "response.output_audio.delta" not in types, "audio came as events, not on the track"
        assert "error" not in types, [event for event in call.events if event.get("type") == "error"]
        transcript = [e for e in call.events if e.get("type") == "response.output_audio_transcript.done"]
        print(f"answer: {transcript[-1].get('transcript') if transcript else ''}")
        await asyncio.sleep(0.3)  # the track's jitter buffer hands over its last frames
        with wave.open(options.answer_out, "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(24_000)
            file.writeframes(b"".join(call.received))
    finally:
        await call.close()


async def clear(options):
    call = Call(options)
    try:
        await call.connect()
        call.microphone.say(read_wav(options.question))
        started = await call.next("output_audio_buffer.started")
        await asyncio.sleep(0.5)  # let some of the answer be heard
        call.send({"type": "output_audio_buffer.clear"})
        cleared = await call.next("output_audio_buffer.cleared", seconds=5)
        assert cleared.get("response_id") == started.get("response_id"), cleared
        # The stored reply is cut to what the call actually sent.
        truncated = await call.next("conversation.item.truncated", seconds=5)
        assert 300 <= truncated["audio_end_ms"] <= 2_000, truncated
        # Generated faster than it is spoken, the response may be done already: the clear cut its audio.
        await call.next("response.done", lambda e: e["response"]["id"] == started["response_id"])
        assert not any(e.get("type") == "output_audio_buffer.stopped" and e.get("response_id") == started["response_id"]
                       for e in call.events), "a cleared buffer does not also stop"
    finally:
        await call.close()


async def flood(options):
    call = Call(options)
    try:
        await call.connect()
        for index in range(3_000):
            call.send({"type": "conversation.item.retrieve", "item_id": f"item_flood_{index}"})
        refused = await call.next("error", lambda e: "per second" in e.get("error", {}).get("message", ""), seconds=30)
        assert refused, "the flood was not refused"
        # The call still works: a later event is answered.
        await asyncio.sleep(5)
        mark = len(call.events)
        call.send({"type": "session.update", "session": {"type": "realtime", "instructions": "Still here."}})
        await call.next("session.updated", seconds=20, after=mark)
    finally:
        await call.close()


async def no_audio(options):
    pc = RTCPeerConnection()
    pc.createDataChannel("oai-events")
    await pc.setLocalDescription(await pc.createOffer())
    status, _, body = await post(options, pc.localDescription.sdp)
    await pc.close()
    assert status == 400 and "audio" in body, f"{status}: {body}"


async def sideband(options):
    call = Call(options)
    try:
        await call.connect()
        call_id = call.location.rsplit("/", 1)[1]
        url = options.url.replace("http://", "ws://").replace("/v1/realtime/calls", f"/v1/realtime?call_id={call_id}")
        async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {options.secret}"}) as backend:
            first = json.loads(await asyncio.wait_for(backend.recv(), 10))
            assert first["type"] == "session.updated", first
            backend_events = []
            mark = len(call.events)
            await backend.send(json.dumps({"type": "conversation.item.create", "item": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say hello."}]}}))
            await backend.send(json.dumps({"type": "response.create"}))
            done = await call.next("response.done", seconds=30, after=mark)
            assert done["response"]["status"] == "completed", done["response"]["status"]
            while not any(e.get("type") == "response.done" for e in backend_events):
                backend_events.append(json.loads(await asyncio.wait_for(backend.recv(), 10)))
            assert any(e.get("type") == "response.created" for e in backend_events), "the backend did not see the response"
        # A sideband socket needs the server secret.
        try:
            async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {options.token}"}):
                raise AssertionError("a client token opened a sideband socket")
        except websockets.exceptions.InvalidStatus as refused:
            assert refused.response.status_code == 403, refused.response.status_code
    finally:
        await call.close()


async def typed_handoff(options):
    call = Call(options)
    try:
        await call.connect()
        call.send({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is my balance?"}]}})
        call.send({"type": "response.create"})
        handoff = await call.next("parley.handoff", seconds=30)
        assert "error" not in handoff, handoff
        print(f"handoff: {handoff.get('from_agent')} -> {handoff.get('to_agent')}", flush=True)
        await call.next("session.updated", seconds=30)
        first = await call.next("response.done", seconds=30)
        second = await call.next("response.done", lambda e: e["response"]["id"] != first["response"]["id"], seconds=30)
        assert second["response"]["status"] == "completed", second["response"]["status"]
        tools = [e.get("name", "") for e in call.events if e.get("type") == "parley.tool_call.started"]
        print(f"tools: {','.join(tools)}", flush=True)
        transcript = [e for e in call.events if e.get("type") == "response.output_audio_transcript.done"]
        print(f"answer: {transcript[-1].get('transcript') if transcript else ''}", flush=True)
        assert not any(e.get("type") == "error" for e in call.events), [e for e in call.events if e.get("type") == "error"]
    finally:
        await call.close()


async def vanish(options):
    call = Call(options)
    await call.connect()
    call.microphone.say(read_wav(options.question))
    await asyncio.sleep(0.5)
    # Like a laptop lid shut: every UDP socket of the peer closes without a word.
    for transceiver in call.pc.getTransceivers():
        connection = transceiver.sender.transport.transport._connection
        for protocol in connection._protocols:
            protocol.transport.close()
    print(f"vanished {call.location}", flush=True)


class HalfOpenPeer:
    """A peer that POSTs an offer and answers ICE like a browser, over a plain UDP socket, but
    never completes DTLS (its offer's fingerprint belongs to no certificate)."""

    def __init__(self, options):
        self.options = options
        self.local_fragment = "half" + os.urandom(4).hex()
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.settimeout(1)

    async def open(self):
        port = self.socket.getsockname()[1]
        offer = "\r\n".join([
            "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            f"m=audio {port} UDP/TLS/RTP/SAVPF 111", "c=IN IP4 127.0.0.1", "a=mid:0", "a=sendrecv", "a=rtcp-mux",
            "a=rtpmap:111 opus/48000/2", f"a=ice-ufrag:{self.local_fragment}", f"a=ice-pwd:{os.urandom(12).hex()}",
            "a=fingerprint:sha-256 " + ":".join(f"{byte:02X}" for byte in os.urandom(32)), "a=setup:actpass",
            f"a=candidate:1 1 udp 2130706431 127.0.0.1 {port} typ host",
        ]) + "\r\n"
        status, _, answer = await post(self.options, offer)
        assert status == 201, f"the half-open peer's offer: {status} {answer}"
        lines = answer.split("\r\n")
        self.fragment = next(line.split(":", 1)[1] for line in lines if line.startswith("a=ice-ufrag:"))
        self.password = next(line.split(":", 1)[1] for line in lines if line.startswith("a=ice-pwd:"))
        candidate = next(line for line in lines if line.startswith("a=candidate:")).split()
        self.server = (candidate[4], int(candidate[5]))

    async def check(self):
        """One ICE connectivity check (a nominating binding request); whether the server answered it."""
        request = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST)
        request.attributes["USERNAME"] = f"{self.fragment}:{self.local_fragment}"
        request.attributes["PRIORITY"] = 1853824767
        request.attributes["ICE-CONTROLLING"] = random.getrandbits(64)
        request.attributes["USE-CANDIDATE"] = None
        request.add_message_integrity(self.password.encode())
        request.add_fingerprint()

        def exchange():
            self.socket.sendto(bytes(request), self.server)
            try:
                while True:
                    reply = stun.parse_message(self.socket.recv(2048))
                    if reply.transaction_id == request.transaction_id:
                        return reply.message_class == stun.Class.RESPONSE
            except (socket.timeout, ValueError):
                return False

        return await asyncio.to_thread(exchange)

    def send(self, datagram):
        self.socket.sendto(datagram, self.server)

    async def wait_until_ended(self, seconds=45):
        """Checks until the server stops answering: it ended the call."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if not await self.check():
                return
            await asyncio.sleep(0.5)
        raise AssertionError(f"the half-open call was still answering ICE checks after {seconds} s")


async def hostile_neighbours(options):
    good, flooder = Call(options), Call(options)
    garbage, silent = HalfOpenPeer(options), HalfOpenPeer(options)
    try:
        await good.connect()
        await flooder.connect()
        for peer in (garbage, silent):
            await peer.open()
            assert await peer.check(), "the server did not answer a half-open peer's ICE check"
        # Records that look like DTLS (content type 22, version 1.2) and are not.
        for _ in range(20):
            garbage.send(bytes([22, 0xFE, 0xFD]) + os.urandom(90))
        good.microphone.say(read_wav(options.question))
        for index in range(3_000):
            flooder.send({"type": "conversation.item.retrieve", "item_id": f"item_flood_{index}"})
        status, _, body = await post(options, "v=0\r\nthis is not an offer\r\n")
        assert status == 400, f"a malformed offer: {status} {body}"
        without_audio = RTCPeerConnection()
        without_audio.createDataChannel("oai-events")
        await without_audio.setLocalDescription(await without_audio.createOffer())
        status, _, body = await post(options, without_audio.localDescription.sdp)
        await without_audio.close()
        assert status == 400 and "audio" in body, f"an offer without audio: {status} {body}"

        heard = await good.next("conversation.item.input_audio_transcription.completed")
        print(f"heard beside the hostile peers: {heard.get('transcript')}", flush=True)
        done = await good.next("response.done")
        assert done["response"]["status"] == "completed", f"response ended {done['response']['status']}"
        await good.next("output_audio_buffer.stopped", lambda e: e.get("response_id") == done["response"]["id"])
        assert not [e for e in good.events if e.get("type") == "error"], [e for e in good.events if e.get("type") == "error"]
        await flooder.next("error", lambda e: "per second" in e.get("error", {}).get("message", ""), seconds=30)
        await garbage.wait_until_ended()
        await silent.wait_until_ended()
    finally:
        await good.close()
        await flooder.close()
        for peer in (garbage, silent):
            peer.socket.close()


async def relayed(options):
    servers = json.loads(options.ice_servers)
    turn = next(url for server in servers for url in ([server["urls"]] if isinstance(server["urls"], str) else server["urls"])
                if url.startswith("turn:"))
    host, port = turn[len("turn:"):].split("?")[0].rsplit(":", 1)
    # The TURN server may still be starting: wait for it to answer a binding request.
    deadline = time.time() + 20
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.settimeout(0.5)
    while True:
        request = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST)
        probe.sendto(bytes(request), (host, int(port)))
        try:
            if stun.parse_message(await asyncio.to_thread(probe.recv, 2048)).transaction_id == request.transaction_id:
                break
        except socket.timeout:
            assert time.time() < deadline, f"the TURN server at {host}:{port} never answered"
    probe.close()
    # No host candidates: only what the relay allocates.
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: []
    configuration = RTCConfiguration(iceServers=[
        RTCIceServer(urls=server["urls"], username=server.get("username"), credential=server.get("credential")) for server in servers])
    call = Call(options, configuration)
    try:
        await call.connect()
        connection = call.pc.getTransceivers()[0].sender.transport.transport._connection
        kinds = {candidate.type for candidate in connection.local_candidates}
        assert kinds == {"relay"}, f"local candidates: {kinds}"
        call.microphone.say(read_wav(options.question))
        heard = await call.next("conversation.item.input_audio_transcription.completed")
        print(f"heard through the relay: {heard.get('transcript')}", flush=True)
        done = await call.next("response.done")
        assert done["response"]["status"] == "completed", f"response ended {done['response']['status']}"
        await call.next("output_audio_buffer.stopped", lambda e: e.get("response_id") == done["response"]["id"])
        assert call.received, "no answer audio came through the relay"
        pair = connection._nominated.get(1)
        assert pair is not None and pair.local_candidate.type == "relay", f"the call's pair: {pair}"
    finally:
        await call.close()


SCENARIOS = {"vanish": vanish, "spoken_question": spoken_question, "clear": clear, "flood": flood, "no_audio": no_audio, "sideband": sideband,
             "hostile_neighbours": hostile_neighbours, "relayed": relayed, "typed_handoff": typed_handoff}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--secret", required=True, help="the server secret, for sideband sockets")
    parser.add_argument("--question", required=True)
    parser.add_argument("--answer-out", required=True)
    parser.add_argument("--ice-servers", default="[]", help="a JSON array of RTCIceServer, for the relayed scenario")
    parser.add_argument("scenarios", nargs="+")
    options = parser.parse_args()
    failures = 0
    for name in options.scenarios:
        try:
            await asyncio.wait_for(SCENARIOS[name](options), 180)
            print(f"ok {name}", flush=True)
        except BaseException as error:  # noqa: BLE001 - every failure is reported by name
            failures += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    asyncio.run(main())
