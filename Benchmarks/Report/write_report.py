#!/usr/bin/env python3
"""Writes BENCHMARKS.md from one run of scripts/bench: the ParleyBenchmarks figures (one
tab-separated line each: area, name, value, unit, target, verdict) and the Parley-vs-Pipecat
comparison (comparison.json from compare.py), with the machine they ran on. With --earlier-runs
and --earlier-report, the areas (and the comparison) this run did not measure keep their figures
from the newest earlier run directory that has them or, when the earlier BENCHMARKS.md is newer
or no run directory has them, that file's section; each kept section says which run and commit
it came from and how much changed on its benchmark's path since."""

import argparse
import datetime
import json
import os
import re
import platform
import subprocess

import earlier_report
import headline

AREA_ORDER = [
    "network", "audio", "realtime", "agent", "embedded", "voice", "languages", "turns", "turns-base-ear", "conversation", "embedded-capacity",
    "interruption-plain-client", "session", "server", "store",
    "cluster", "cluster-capacity", "webrtc", "recordings", "telephony", "sip",
]
AREA_TITLES = {
    "network": "Network layer (libwebsockets HTTP and WebSocket)",
    "audio": "Audio and turn-taking core",
    "realtime": "Realtime protocol codec",
    "agent": "Agent client (OpenAI-compatible streaming)",
    "embedded": "Embedded offline stack",
    "voice": "The neural voice next to flite",
    "languages": "The ear in other languages: Whisper tiny.en and base",
    "turns": "Turn-taking judges",
    "turns-base-ear": "Turn-taking with Whisper base as the ear",
    "conversation": "A conversation as a client hears it (embedded stack)",
    "embedded-capacity": "Conversations one server holds on the embedded stack, with each Whisper model",
    "interruption-plain-client": "Interruptions as a plain Realtime client hears them (paced WebSocket speech)",
    "session": "Voice session pipeline",
    "server": "Server under load",
    "store": "Store engines: SQLite and PostgreSQL",
    "cluster": "Cluster mode on PostgreSQL",
    "cluster-capacity": "Cluster capacity: two nodes against one on the same machine",
    "webrtc": "WebRTC calls",
    "recordings": "Call recordings",
    "telephony": "Phone calls (Twilio Media Streams, G.711)",
    "sip": "SIP calls (the SIP door, RTP on loopback)",
}
AREA_NOTES = {
    "cluster-capacity": (
        "The server area's defaults profile (Silero VAD, 300 ms silence, preemption on, flite's spoken question, the fake "
        "upstream as slow as a hosted stack) and its C load client, which spreads the sessions round-robin over the nodes. "
        "Each node is a `ParleyBenchmarks serve` process in cluster mode (127.0.0.2, 127.0.0.3) on one throwaway "
        "PostgreSQL; every session joins an instance of its own (a claim, epoch-checked item writes, the cluster-wide "
        "admission count). For 1 node, then 2, the session count is searched by the rule every capacity figure here "
        "follows (see the top of this page): the largest count that held and the smallest that failed; a count holds when "
        "every turn is answered and p99 last voiced chunk sent -> first audio delta is within the server area's defaults "
        "bound (the upstream's own path to first audio + the 300 ms silence window + 500 ms). All of it shares "
        "the machine's 2 cores: a second node adds no CPU, so it adds no capacity here; the figures show what the split "
        "costs (CPU and memory per session, PostgreSQL's CPU and transactions), not a scale-out."
    ),
    "turns": (
        "The turn corpus (complete questions, questions with a 0.5–1.5 s mid-thought pause, backchannels, coughs and "
        "interruptions, spoken by six flite and espeak-ng voices, made by `TurnCorpusScript`) played through real "
        "realtime sessions of a real server with the embedded ears (Silero VAD, Smart Turn v3.2, Whisper tiny.en, the "
        "SmolLM2 text judge on llama-server), one session per clip, paced in real time, **three clips at once** on the "
        "2 cores. \"Wall-clock\" figures run from sending the chunk holding the clip's last voiced sample to receiving "
        "`speech_stopped`, so they include the models' time and the wait for a CPU the two other sessions' models take; "
        "\"audio time\" is where in the stream the server put the turn's end (`audio_end_ms`). What one user waits in "
        "a conversation alone on the server is the conversation area's stage \"last voiced sample sent -> "
        "speech_stopped received\". The semantic_vad targets (turn end ≤ 300 ms, as `server_vad`'s window, and ≤ 5 % "
        "of mid-thought pauses cut off under `auto`) are judged on the wall-clock figure. `low` waits for a more certain "
        "verdict by design (up to 8 s, and 4 s when only the words say complete), so it misses the 300 ms target whenever "
        "the audio model is unsure."
    ),
    "voice": (
        "The Piper voice en_US-joe-medium (onnxruntime, one intra-op thread, phonemes from a long-lived espeak-ng) and "
        "flite cmu_us_slt in the benchmark process. Real-time factor and Whisper tiny.en WER over the ten everyday "
        "sentences (resampled to 16 kHz with libsoxr) while nothing else of Parley runs; time to first audio for the reply "
        "\"Sure, the next train to the airport leaves at half past seven. It takes about forty minutes to get there.\" fed "
        "word by word to the sentence segmenter, from the moment it releases the first clause to the first 24 kHz chunk "
        "(after libsoxr), while SmolLM2 generates a long story on the supervised llama-server the whole time."
    ),
    "languages": (
        "Whisper tiny.en and base (whisper.cpp, greedy, in the benchmark process) on sentences spoken by flite slt "
        "and eSpeak NG (16 kHz): the ten everyday English sentences, and eight everyday sentences each in German, "
        "French (eSpeak at 140 words a minute) and Spanish, without numbers. Word error rate after lower-casing and "
        "dropping punctuation, no other normalisation; base left to detect the language (with how often it detected "
        "it right) and told it. Transcription time per English sentence, both models, while nothing else of Parley runs. "
        "eSpeak NG's voices are robotic, and Whisper base hears them far worse than a person's voice: these rates say how "
        "well the agent's own espeak-ng voice is understood, not how well base hears a caller.\n\n"
        "**Which Whisper is the default: tiny.en stays.** On 2 cores base costs far more than it gives an English "
        "speaker. Its final transcript of a question takes 1,549 ms (p50) on the conversation's critical path, and the "
        "embedded conversation answers in 2,393 ms (p50) with it against 1,003 ms with tiny.en (the conversation section, "
        "idle run at `478dcf4`), while on a clear voice (flite slt) both mishear 2.5 % of words. Base pays where a caller "
        "speaks another language (tiny.en hears only English) or an unclear voice (espeak-ng: 7.5 % against 21.2 %), so it "
        "is one flag away (`--asr-model base`, `PARLEY_ASR_MODEL=base`) and the web page and `GET /v1/status` name the ear "
        "in use. Splitting the work (base for final transcripts, tiny.en for partials) would still put base's 1.5 s on "
        "every turn's critical path, so it is not done. The turn-taking rerun with base is its own section "
        "(`turns-base-ear`)."
    ),
    "store": (
        "`appendItem` on each engine, in the benchmark process: SQLite is a file in a temporary directory (WAL, "
        "`synchronous=NORMAL`, so no fsync per commit); PostgreSQL a throwaway local server from `scripts/postgres` with "
        "its defaults (fsync at every commit), over loopback TCP through the store's pool of 4 connections. One "
        "conversation writes item after item (a session's pace), then 16 conversations write at once."
    ),
    "network": (
        "ParleyNet (in the benchmark process) and a raw libwebsockets server in C (`Benchmarks/RawLWS/raw_lws_server.c`, "
        "the same Debian lws, run on a libev loop like ParleyNet, so the two differ only in what sits on top of lws) "
        "side by side. Both write an echo the same way: at once from the receive callback when nothing is ahead of "
        "it, otherwise queued for the writable callback; the raw server is paused (SIGSTOP) while ParleyNet is measured. Every figure "
        "comes from pairs of runs, one per server, back to back, raw first in one pair and ParleyNet first in the next. "
        "GET: `wrk` with one thread, 7 pairs of 2 s runs per connection count. WebSocket echo: `Benchmarks/RawLWS/"
        "ws_rtt_client.c` sends one binary message on every connection per round and times each echo; 1 connection: "
        "3 pairs of runs of 2,000 rounds; 100 connections: 21 pairs of runs of 200 rounds. Per-server figures are medians "
        "over the runs; the ratio and \"added by ParleyNet\" are medians over the pairs of the pair's ratio or difference. "
        "Each pair's two figures are in the run's `benchmarks.log`. One difference remains: ParleyNet runs inside the "
        "benchmark process, the raw server in a process of its own. At one connection every echo wakes a server that "
        "was idle, and on this virtual machine that wake-up alone moves the figure (the raw server's 1 KB p50 was 46 µs "
        "in one run and 104 µs in another, ParleyNet's 25–30 µs), so the one-connection \"added by ParleyNet\" figures "
        "say little beyond that ParleyNet adds no measurable time; the 100-connection ones compare two busy servers."
    ),
    "conversation": (
        "One realtime WebSocket session to `ParleyApp` on the embedded stack with a user's defaults (Silero VAD, "
        "server VAD with a 300 ms silence window, preemptive transcription after 30 ms and preemptive generation), "
        "after a warm-up turn in a session of its own: ten different questions in one conversation (the replies stay "
        "in the history), spoken alternately by flite's `slt` and `rms` voices (the `flite` command), sent as 20 ms "
        "`input_audio_buffer.append` chunks paced in real time with silence around them; each question is asked half "
        "a second after the previous reply has finished playing (its first delta plus the length of its audio), "
        "as a listener waits out an answer. Latency: from sending the chunk with the question's "
        "last sample above -36 dBFS to receiving the first `response.output_audio.delta`. The stages come from the "
        "server's `parley.turn_metrics` (from the turn's end); \"delivery\" is what is left. Then the same with "
        "the client's turn detection set to `semantic_vad` (eagerness auto) by a `session.update` before the first "
        "question, with preemptive transcription and generation off, and with Whisper base (multilingual) as the ear "
        "in place of tiny.en, each against a fresh server."
    ),
    "embedded-capacity": (
        "One `ParleyApp` on the embedded stack with the server's defaults (Silero VAD, whisper.cpp in process, SmolLM2 "
        "on the supervised llama-server, the Piper voice; 300 ms silence window, preemption on), once with Whisper "
        "tiny.en (the default) and once with base (`--asr-model base`) as the ear. Every session is a realtime "
        "WebSocket client in the benchmark process holding a conversation as the conversation area's does: different "
        "flite questions (`slt`, `rms`) paced in real time, each asked half a second after the previous reply has "
        "finished playing. The session count is searched by the rule at the top of this page: each trial asks one "
        "unmeasured warm-up question in a session of its own, then starts its N sessions spread over 5 s (session k "
        "at k·5 s/N), so their first questions do not all end at once; a trial holds when every question is answered "
        "and the p90 from sending the question's last voiced sample to receiving the first "
        "`response.output_audio.delta` is at most 1.5 s, by which time a caller starts to wonder whether they were "
        "heard. CPU per session is this process's (its clients included) and llama-server's over the trial, divided by "
        "the sessions. The default ear is decided from this area with `languages` (word error rates, transcript "
        "latency) and `conversation` (a conversation with each): tiny.en stays the default while base, which mishears "
        "less, cannot hold one conversation within the bound on these two cores ([docs/models.md](docs/models.md))."
    ),
    "session": (
        "Zero-latency providers, energy VAD, the windowed-sinc input resampler 24→16 kHz, 300 ms silence window; "
        "audio paced in real time in 20 ms chunks, each session's chunks at its own phase of the 20 ms tick (as "
        "independent clients send them). Latency: from handing the session the chunk that ended the user's turn to the first "
        "audio chunk of the reply coming out of its event stream (the silence window itself is not counted)."
    ),
    "server": (
        "The benchmark server (`ParleyBenchmarks serve`: ParleyApp with OpenAI-compatible providers at the fake "
        "upstream) in its own process; N realtime WebSocket sessions from the load client "
        "(`Benchmarks/LoadClient/realtime_load_client.c`: one thread of C on the same 2 cores) streaming 20 ms "
        "`input_audio_buffer.append` events in real time. Two profiles. **Defaults** (the capacity a user gets): "
        "Silero VAD, a question spoken by flite, an upstream as slow as a hosted stack, each delay a published figure "
        "(`RealisticUpstream.swift` names the sources): transcription 700 ms, first token 930 ms then 58 words/s "
        "(GPT-4.1 mini's 77 tokens/s per Artificial Analysis), speech first byte 500 ms, a three-sentence reply "
        "(42 words) whose audio lasts as long as it would be spoken (400 ms a word, 150 words a minute), and each "
        "turn's silence long enough to hear it out; latency from sending the chunk holding the question's last voiced "
        "sample (above -36 dBFS) to receiving the first `response.output_audio.delta`, so it includes the 300 ms "
        "silence window and the upstream's delays; p99 limit: the upstream's own path to first audio (transcription, "
        "first token, the tokens until the first chunk is released, speech first byte) + the 300 ms window + 500 ms "
        "for the server, the figure in the capacity row's name (`DefaultsLatencyBound.swift`). The phone doors' and "
        "WebRTC's defaults capacities use the same upstream and bound. **Pipeline overhead**: energy VAD, synthetic "
        "speech, an upstream answering at once, so with preemption "
        "the reply is ready inside the silence window; latency from sending the chunk that ended the turn (mapped from "
        "the server's `speech_stopped.audio_end_ms`) to the first audio delta, i.e. turn end -> release of a reply "
        "already made; p99 limit 20 ms. The server-side commit -> stage figures count 0 for what was ready before "
        "the commit. Each profile's capacity is searched by the rule at the top of this page: every trial has a line, "
        "and the full figures are those of the largest count held and the smallest failed. Memory and CPU are "
        "the server process's (`/proc`). Beside each load, `Benchmarks/HostProbe/host_slowdown_probe.c` times a fixed "
        "piece of arithmetic every 2 ms in its own CPU time and reports the stretches where it took more than 3 times "
        "its median: the host running this virtual machine's CPUs slower, which the guest cannot otherwise see. The "
        "p99 \"away from host slow stretches\" leaves out the turns that ended from 20 ms before such a stretch to "
        "100 ms after it; the target is judged on every turn."
    ),
}

CAPACITY_RULE = (
    "**Capacity figures** follow one rule (`Benchmarks/Harness/CapacitySearch.swift`, and "
    "`Benchmarks/LoadClient/capacity_search.py` for the Pipecat comparison): every trial runs on a system warmed up by "
    "an unmeasured turn; the count grows (a ladder, then doubling up to a ceiling) until one fails — a count fails only "
    "when a second run at it fails too, so one noisy run does not set a limit — then it is bisected between the "
    "largest count that held and the smallest that failed until the two are within 10 %. Each is written \"largest "
    "held N, smallest failed M\"; a search whose first count failed says so, and one that failed no count says it "
    "reached its ceiling."
)


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as handle:
        total_kb = int(handle.readline().split()[1])
    return {
        "cores": os.cpu_count(),
        "cpu": model,
        "memory_gib": round(total_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
    }


def git_commit(root):
    try:
        return subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def read_figures(path):
    figures = []
    if not path or not os.path.exists(path):
        return figures
    with open(path) as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 6:
                area, name, value, unit, target, verdict = parts
                figures.append({"area": area, "name": name, "value": float(value), "unit": unit, "target": target, "verdict": verdict})
    return figures


def number(value, digits=None):
    if value is None:
        return "–"
    if digits is None:
        magnitude = abs(value)
        digits = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
    return f"{value:,.{digits}f}"


def value_cell(figure):
    """A figure's value with its unit. A capacity figure (unit "NOUN held; REST", from a capacity
    search) reads "largest held 136 NOUN, smallest failed 150", or "no count held, ..." when none did."""
    noun, separator, rest = figure["unit"].partition(" held; ")
    if not separator:
        return f"{number(figure['value'])} {figure['unit']}"
    if figure["value"] == 0:
        return f"no count held, {rest}"
    return f"largest held {number(figure['value'], 0)} {noun}, {rest}"


def verdict_cell(verdict):
    return {"pass": "pass", "MISS": "**MISS**", "-": ""}.get(verdict, verdict)


def read_run_info(run_dir):
    """When and at which commit a run directory's figures were made (run.json, written by scripts/bench)."""
    path = os.path.join(run_dir, "run.json")
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    return {"started": os.path.basename(run_dir).removeprefix("run-"), "commit": "unknown"}


def earlier_run_dirs(runs_root, current_run):
    """Earlier run directories under `runs_root`, newest first."""
    if not runs_root or not os.path.isdir(runs_root):
        return []
    names = sorted((n for n in os.listdir(runs_root) if n.startswith("run-")), reverse=True)
    current = os.path.basename(os.path.normpath(current_run)) if current_run else None
    return [os.path.join(runs_root, n) for n in names if n != current]


def earlier_figures(figures, failed_areas, runs):
    """Figures of the areas this run did not attempt, each from the newest earlier run that has
    it, and for each such area the run it came from. An area that failed now is not replaced."""
    measured = {f["area"] for f in figures} | set(failed_areas)
    kept, sources = [], {}
    for run in runs:
        for figure in read_figures(os.path.join(run, "figures.tsv")):
            area = figure["area"]
            if area in measured or sources.get(area, run) != run:
                continue
            sources[area] = run
            kept.append(figure)
    return kept, {area: read_run_info(run) for area, run in sources.items()}


def area_sections(figures, failed_areas, root, kept_from=None, kept_sections=None):
    """Each area's section: its figures, or the section kept from the earlier BENCHMARKS.md."""
    kept_from, kept_sections = kept_from or {}, kept_sections or {}
    lines = []
    present = {f["area"] for f in figures} | set(kept_sections)
    areas = [a for a in AREA_ORDER if a in present]
    areas += sorted(present - set(areas))
    for area in areas:
        lines += [f"## {AREA_TITLES.get(area, area)} (`{area}`)", ""]
        if area in kept_sections:
            lines += earlier_report.provenance_lines(kept_sections[area]["info"], root, area) + kept_sections[area]["body"] + [""]
            continue
        if area in kept_from:
            lines += earlier_report.provenance_lines(kept_from[area], root, area)
        if area in AREA_NOTES:
            lines += [AREA_NOTES[area], ""]
        lines += ["| figure | value | target | result |", "|---|---:|---|---|"]
        for figure in (f for f in figures if f["area"] == area):
            lines.append(f"| {figure['name']} | {value_cell(figure)} | {figure['target']} | {verdict_cell(figure['verdict'])} |")
        lines.append("")
        lines += area_analysis(area, [f for f in figures if f["area"] == area])
    missing = [a for a in AREA_ORDER if a not in areas]
    if missing or failed_areas:
        lines += ["## Areas without figures in this run", ""]
        for area in failed_areas:
            lines.append(f"- `{area}`: the benchmark failed in this run (see the bench log).")
        for area in missing:
            if area not in failed_areas:
                lines.append(f"- `{area}`: not measured (not selected by `--only`, or not registered in ParleyBenchmarks at this commit).")
        lines.append("")
    return lines


def area_analysis(area, figures):
    """Where the time goes when a session or server target is missed, from the run's own figures."""
    if not any(f["verdict"] == "MISS" for f in figures):
        return []
    lines = []
    if area == "session":
        lateness = [f for f in figures if f["name"].startswith("driver lateness")]
        worst = max(lateness, key=lambda f: f["value"], default=None)
        if worst and worst["value"] > 10:
            lines.append(
                f"Where the time goes: the benchmark's own real-time driver ran up to {number(worst['value'], 0)} ms late "
                f"({worst['name'].split(', ')[-1]}): the process was not scheduled for that long, and the pipeline's p99 "
                "carries the same scheduling delays. p50 is the pipeline's own cost."
            )
    if area == "server":
        stages = [f for f in figures if f["name"].startswith("server-side commit")]
        cpu = [f for f in figures if f["name"].startswith("server CPU per session-second")]
        if stages:
            # Figures name their profile and their session count: "..., defaults (...), 300 sessions, ...".
            def sessions_of(figure):
                found = re.search(r"(\d+) sessions", figure["name"])
                return int(found.group(1)) if found else 0
            worst_sessions = max(sessions_of(f) for f in stages)
            label = f"{worst_sessions} sessions"
            parts = [f"{f['name'].split(' -> ')[1].split(' (')[0].split(',')[0]} {number(f['value'], 1)} {f['unit']}"
                     for f in stages if sessions_of(f) == worst_sessions]
            cpu_figure = next((f for f in cpu if sessions_of(f) == worst_sessions), None)
            text = f"Where the time goes at {label}: the server's own figures from the commit are " + "; ".join(parts) + " (p50 / p99)."
            if cpu_figure:
                cores_used = cpu_figure["value"] * worst_sessions / 1000
                text += (
                    f" The server process used {number(cores_used, 2)} of {os.cpu_count()} cores on average; the run-queue figure "
                    "above shows how long its threads were ready but waited for a CPU, which the load client and the fake "
                    "upstream on the same cores were also using."
                )
            lines.append(text)
        lines += host_slowdown_analysis(figures)
    return lines + [""] if lines else []


def host_slowdown_analysis(figures):
    """What the host's slow stretches did to the server's tail, from the probe's figures."""
    idle = next((f for f in figures if f["name"].startswith("machine (idle") and "share of the time" in f["name"]), None)
    stretches = next((f for f in figures if f["name"].startswith("machine (idle") and "count / longest" in f["name"]), None)
    away = [f for f in figures if "p99 of the turns away from host slow stretches" in f["name"]]
    if not idle or not stretches or not away:
        return []
    parts = [
        f"{f['name'].split(', ')[1]}: {number(f['value'], 1)} ms over {number(detail(f), 0)} % of the turns" for f in away
    ]
    return [
        f"The host: with nothing else running, this machine's CPUs ran slow {number(idle['value'], 1)} % of the time, "
        f"in {number(stretches['value'], 0)} stretches up to {number(detail(stretches), 0)} ms long, at worst "
        f"{number(detail(idle), 0)} times slower (a fixed piece of arithmetic, timed in its own CPU time). Every stage of "
        "every turn slows down with them and work queues up behind them. Away from those stretches the p99 was "
        + "; ".join(parts) + "."
    ]


def detail(figure):
    """The second value of a figure printed as "value / detail unit"."""
    fields = figure["unit"].split()
    return float(fields[1]) if len(fields) > 1 and fields[0] == "/" else None
    return [
        f"The host: with nothing else running, this machine's CPUs ran slow {number(idle['value'], 1)} % of the time, "
        f"up to {worst} times slower (a fixed piece of arithmetic, timed in its own CPU time). Both CPUs slow down "
        "together, for tens of milliseconds at a time, every second or two; every stage of every turn slows with them and "
        "work queues up behind them. Away from those stretches the p99 was " + "; ".join(parts) + "."
    ]


def comparison_section(comparison, cores):
    settings = comparison["settings"]
    systems = comparison["systems"]
    parley, pipecat = systems.get("parley"), systems.get("pipecat")
    upstream = settings["upstream"]
    lines = [
        "## Parley vs Pipecat",
        "",
        f"Same machine, same run, same load client (`Benchmarks/LoadClient/loadclient.py`), same fake upstream "
        f"(`FakeUpstream`: transcription {upstream['transcription_ms']} ms, first token {upstream['first_token_ms']} ms then "
        f"{upstream['tokens_per_second']} tokens/s, speech first byte {upstream['speech_first_byte_ms']} ms and "
        f"{upstream['speech_audio_ms']} ms of audio per sentence; reply: two sentences). Each session streams a 2 s flite "
        f"utterance (slt voice) then silence, in 20 ms frames paced in real time, one turn every {settings['turn_period_ms'] // 1000} s; "
        f"session starts are spread over one turn period. Both end a turn after {settings['silence_window_ms']} ms of silence "
        f"and count a frame as speech from a Silero probability of {settings.get('vad_threshold', 0.5)} "
        f"(Parley: {'Silero VAD (its own Swift network on the ggml weights, one shared by all sessions)' if settings.get('parley_vad', 'energy') == 'silero' else 'energy VAD'} "
        "+ its turn detector, threshold set by the client's `session.update`; "
        "Pipecat: Silero VAD (onnxruntime) with `confidence` and `stop_secs=0.3` and a speech timeout of 0). "
        "Pipecat runs one FastAPI/uvicorn worker process per core on uvloop, all accepting from one socket, with a "
        "pipeline per WebSocket (`FastAPIWebsocketTransport`, protobuf serializer, `OpenAISTTService` → "
        "`LLMContextAggregatorPair` → `OpenAILLMService` → `OpenAITTSService`), logging at WARNING; its CPU and memory "
        "are those of all its processes. Parley runs `ParleyBenchmarks serve` (the ParleyApp realtime endpoint, OpenAI "
        "Realtime protocol) without preemptive transcription and generation, like for like (Pipecat has neither); the "
        "N = 1 run with them on, Parley's default, is a separate row. Each run starts a fresh server and warms it up "
        "with one unmeasured session of one turn. The capacity search is the rule every capacity figure here follows "
        "(`Benchmarks/LoadClient/capacity_search.py`): N = 1, 10, 50, 100, then doubling until a count fails — a count "
        "fails only when a second run at it fails too — then bisection between the largest count that held and the "
        f"smallest that failed until they are within {precision_text(systems)}; both ends are reported.",
        "",
        f"Latency is end of the user's speech (the 20 ms frame holding the utterance's last sample above 524 of 32,768, "
        f"-36 dBFS; the same frame for both systems) → first agent audio byte received: the silence window as its length in "
        f"audio time plus the time from sending the frame that completes it to the first audio byte. "
        f"The fixed part every system pays — the silence window plus the upstream delays up to the first sentence's "
        f"audio — is {number(settings['floor_ms'], 0)} ms; *framework latency* is the measured latency minus it. "
        "CPU per session-second is the server process's CPU time over the run divided by the seconds of audio all sessions streamed; memory per "
        "session is (peak RSS during the run − RSS before any session) ÷ N. A count *holds* when every session "
        f"connects, ≥ 99% of turns are answered and p99 latency is under {settings['p99_limit_ms']} ms; a count that "
        "failed is marked in the table.",
        "",
        "| N | Parley p50 / p99 (ms) | Pipecat p50 / p99 (ms) | p50 ratio | Parley CPU ms per session-s | Pipecat CPU ms per session-s | Parley MiB/session | Pipecat MiB/session | memory ratio | server cores used (waiting for a CPU): Parley · Pipecat |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    counts = sorted({int(n) for s in systems.values() for n in s["runs"]})
    for n in counts:
        a = parley["runs"].get(str(n)) if parley else None
        b = pipecat["runs"].get(str(n)) if pipecat else None
        lines.append(
            f"| {n} | {latency_cell(a)} | {latency_cell(b)} | {ratio(p50(b), p50(a))} | {number(cpu_per_session_second(a))} | "
            f"{number(cpu_per_session_second(b))} | {number(mib_per_session(a))} | {number(mib_per_session(b))} | "
            f"{ratio(mib_per_session(b), mib_per_session(a))} | {cores_cell(a)} · {cores_cell(b)} |"
        )
    lines.append("")
    for name, data in (("Parley", parley), ("Pipecat", pipecat)):
        if data:
            trials = ", ".join(f"{t['sessions']} {'held' if t['held'] else 'failed'}" for t in data["search"]["trials"])
            lines += [f"{name}'s capacity search, every run in order: {trials}; {data['search']['summary']}.", ""]

    targets = []
    floor = settings["floor_ms"]
    a1 = parley["runs"].get("1") if parley else None
    b1 = pipecat["runs"].get("1") if pipecat else None
    if a1 and b1 and p50(a1) is not None and p50(b1) is not None:
        # Parley must save at least half of what Pipecat spends above the fixed part; when
        # Pipecat spends nothing above it, Parley must simply not be slower.
        limit = p50(b1) - max(0.0, p50(b1) - floor) / 2
        targets.append((
            "end of speech → first audio at N = 1, p50, like for like (no preemption)", f"{number(p50(a1), 0)} ms",
            f"{number(p50(b1), 0)} ms", ratio(p50(b1), p50(a1)), f"Parley ≤ {number(limit, 0)} ms (Pipecat − ½ of its part above the fixed {number(floor, 0)} ms)",
            p50(a1) <= limit,
        ))
    if parley and pipecat:
        held_a, held_b = largest_held(parley), largest_held(pipecat)
        per_core_a, per_core_b = held_a / cores, held_b / cores
        # A ratio needs a count each system held, and is a lower bound when Parley failed none.
        meets = per_core_a >= 5 * per_core_b if held_a and held_b else None
        bound = "≥ " if held_a and parley["search"]["smallest_failed"] is None else ""
        targets.append((
            "concurrent sessions per core (largest count held ÷ cores)", f"{number(per_core_a, 1)} ({capacity_text(parley)})",
            f"{number(per_core_b, 1)} ({capacity_text(pipecat)})",
            bound + ratio(per_core_a, per_core_b) if held_a and held_b else "– (a system held no count)", "≥ 5×", meets,
        ))
        common = [n for n in counts if n >= 10 and str(n) in parley["runs"] and str(n) in pipecat["runs"]
                  and parley["runs"][str(n)]["connected"] == n and pipecat["runs"][str(n)]["connected"] == n]
        if common:
            n = max(common)
            ma, mb = mib_per_session(parley["runs"][str(n)]), mib_per_session(pipecat["runs"][str(n)])
            meets = ma is not None and mb is not None and ma > 0 and mb >= 10 * ma
            targets.append((f"memory per session at N = {n}", f"{number(ma)} MiB", f"{number(mb)} MiB", ratio(mb, ma), "≥ 10× smaller", meets))
    other = comparison.get("parley_with_preemption") or comparison.get("parley_without_preemption")
    if a1 and b1 and other and p50(other) is not None and p50(b1) is not None:
        setting = "with preemptive transcription and generation (Parley's default)" if "parley_with_preemption" in comparison \
            else "without preemptive transcription and generation"
        targets.append((
            f"end of speech → first audio at N = 1, p50, Parley {setting}", f"{number(p50(other), 0)} ms",
            f"{number(p50(b1), 0)} ms", ratio(p50(b1), p50(other)), "(for comparison)", None,
        ))
    lines += ["| target | Parley | Pipecat | ratio | target | result |", "|---|---:|---:|---:|---|---|"]
    for name, a, b, r, target, meets in targets:
        lines.append(f"| {name} | {a} | {b} | {r} | {target} | {'–' if meets is None else 'pass' if meets else '**MISS**'} |")
    lines.append("")
    lines += [
        "With its defaults Parley transcribes a turn once the user has been quiet for 30 ms (preemptive "
        "transcription) and starts the reply on that transcript (preemptive generation, held back until the turn ends "
        "and dropped if the user goes on), so the upstream's transcription and first-token delays are spent inside the "
        "silence window and its latency can fall below the fixed part; the headline row runs without them "
        "(`PARLEY_PREEMPTIVE_TRANSCRIPTION_MS=0`). Pipecat's VAD also gates on volume, so its silence window can begin "
        "before the last sample the load client counts as speech.",
        "",
    ]
    for name, data in (("Parley", parley), ("Pipecat", pipecat)):
        if data and data["search"]["smallest_failed"] is None:
            lines += [f"{name} held every count up to the ceiling of this run ({data['search']['ceiling']}); its figure is a lower bound.", ""]
        if data and data["search"]["first_count_failed"]:
            lines += [f"{name} failed at the first count tried: {data['search']['summary']}.", ""]

    notes = client_notes(systems)
    if notes:
        lines += notes
    profile = comparison.get("parley_profile")
    missed = [t for t in targets if t[5] is False]
    if missed or profile:
        lines += where_time_goes(missed, profile, comparison)
    return lines


def client_notes(systems):
    lines = []
    for system, data in systems.items():
        late = [(int(n), r["pacing"]["late_ticks"], r["pacing"]["worst_tick_lag_ms"]) for n, r in data["runs"].items() if r["pacing"]["late_ticks"]]
        if late:
            worst = max(late, key=lambda item: item[2])
            lines.append(
                f"- {system}: the load client (Python, on the same 2 cores) fell behind real time in {len(late)} run(s); "
                f"worst at N = {worst[0]}: {worst[1]} late 20 ms ticks, up to {worst[2]:.0f} ms late. The silence window is "
                "counted as its length in audio time (latency = window + time from sending the frame that completes it "
                "to the first audio byte), so lateness while it streams does not inflate the figure."
            )
    if lines:
        lines = ["Notes:", ""] + lines + [""]
    lines += [
        "Pipecat's WebSocket output paces audio like a speaker would (it sleeps between chunks), while Parley sends "
        "audio as soon as it is synthesised and the client plays it; first-byte latency is comparable, whole-reply "
        "time is not, so the table shows first audio only.",
        "",
    ]
    return lines


def where_time_goes(missed, profile, comparison):
    lines = ["### Where the time goes", ""]
    if missed:
        lines.append("Missed: " + "; ".join(t[0] for t in missed) + ".")
        lines.append("")
    floor = comparison["settings"]["floor_ms"]
    parley = comparison["systems"].get("parley")
    if parley and "1" in parley["runs"]:
        run = parley["runs"]["1"]
        upstream_ms = floor - comparison["settings"]["silence_window_ms"]
        text = (
            f"At N = 1 Parley's latency is {number(p50(run), 0)} ms p50 of which {number(floor, 0)} ms is the fixed part "
            f"(silence window + {number(upstream_ms, 0)} ms of upstream delays)."
        )
        endpointing = run.get("endpointing_ms", {}).get("p50")
        after = run.get("after_turn_end_ms", {}).get("p50")
        if endpointing is not None and after is not None:
            text += (
                f" Split at the server's `speech_stopped` event: end of speech → the VAD ending the turn {number(endpointing, 0)} ms "
                f"(the {comparison['settings']['silence_window_ms']} ms window, timed from where the voice stopped), then turn end → "
                f"first audio byte {number(after, 0)} ms. The upstream's delays after the turn end are {number(upstream_ms, 0)} ms, "
                "less what preemptive transcription and generation already did inside the window; the rest is Parley: "
                "the HTTP requests, the agent, the sentence segmenter waiting for the token after the first full stop (it "
                "needs the next word to tell a sentence end from an abbreviation), speech synthesis and the WebSocket."
            )
        lines += [text, ""]
    settings = comparison["settings"]
    memory_missed = any(t[0].startswith("memory per session") for t in missed)
    if memory_missed and settings.get("parley_vad") == "silero":
        lines += [
            "Memory: the `server` area above, with the energy VAD, shows what a session costs without Silero; the Silero "
            "network's weights are loaded once and shared, a session holds only its 1 KiB recurrent state.",
            "",
        ]
    if profile:
        lines += [
            f"`perf record -g` of the Parley server process during a run at N = {profile['sessions']} "
            "(flat profile by shared object and symbol, entries ≥ 1.5%):",
            "",
            "```",
        ]
        lines += profile["top"] or ["(no samples)"]
        lines += ["```", ""]
    return lines


def largest_held(system):
    """The largest count a system's capacity search held, 0 when it held none."""
    return system["search"]["largest_held"] or 0 if system else 0


def capacity_text(system):
    """A system's bracket in words: "largest held 136, smallest failed 150"."""
    return system["search"]["summary"] if system else "–"


def precision_text(systems):
    """How close the comparison's capacity searches bisected, as a percentage."""
    precisions = {data["search"]["precision"] for data in systems.values()}
    return " / ".join(f"{precision * 100:.0f} %" for precision in sorted(precisions)) or "10 %"


def p50(run):
    return run["first_audio_ms"]["p50"] if run else None


def latency_cell(run):
    if not run:
        return "–"
    cell = f"{number(run['first_audio_ms']['p50'], 0)} / {number(run['first_audio_ms']['p99'], 0)}"
    if run["answered"] < run["turns"]:
        cell += f" ({run['answered']}/{run['turns']} answered)"
    if run["connected"] < run["sessions"]:
        cell += f" ({run['connected']} connected)"
    if not run.get("held", True):
        cell += " — failed"
    return cell


def cores_cell(run):
    """Cores the server used on average over the run, and cores' worth of time its threads
    were ready but not running because other processes had the CPUs."""
    if not run or not run["wall_seconds"]:
        return "–"
    used = run["server_cpu_seconds"] / run["wall_seconds"]
    waiting = run.get("server_run_queue_wait_seconds")
    return f"{used:.2f}" + (f" ({waiting / run['wall_seconds']:.2f})" if waiting is not None else "")


def cpu_per_session_second(run):
    if not run or not run["session_audio_seconds"]:
        return None
    return run["server_cpu_seconds"] * 1000 / run["session_audio_seconds"]


def mib_per_session(run):
    if not run or not run["connected"]:
        return None
    rss = run["server_rss_kb"]
    return max(rss["peak"] - rss["baseline"], 0) / 1024 / run["connected"]


def ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator <= 0:
        return "–"
    return f"{numerator / denominator:.1f}×"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--figures", help="ParleyBenchmarks output (tab-separated lines)")
    parser.add_argument("--failed-areas", default="", help="comma-separated areas whose benchmark failed")
    parser.add_argument("--comparison", help="comparison.json from compare.py")
    parser.add_argument("--command", required=True, help="the command that produced the run")
    parser.add_argument("--load-average", default="", help="/proc/loadavg when the run began")
    parser.add_argument("--pipecat-version", default="")
    parser.add_argument("--root", required=True, help="repository root")
    parser.add_argument("--out", required=True, help="where to write BENCHMARKS.md")
    parser.add_argument("--run-dir", help="this run's directory (left out when looking for earlier runs)")
    parser.add_argument("--earlier-runs", help="directory of earlier run directories: areas not measured now keep their figures")
    parser.add_argument("--earlier-report", help="the BENCHMARKS.md written before: areas not measured now and in no newer "
                        "earlier run keep its sections")
    args = parser.parse_args(argv)

    info = machine()
    # The commit the run began at (its run.json): the repository may have moved on while it ran.
    run_commit = read_run_info(args.run_dir).get("commit", "unknown") if args.run_dir else git_commit(args.root)
    if run_commit == "unknown":
        run_commit = git_commit(args.root)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    figures = read_figures(args.figures)
    failed = [a for a in args.failed_areas.split(",") if a]
    earlier = earlier_run_dirs(args.earlier_runs, args.run_dir)
    kept, kept_from = earlier_figures(figures, failed, earlier) if earlier else ([], {})
    sections = earlier_report.read_sections(args.earlier_report) if args.earlier_report else {}
    area_sections_before = {area: section for area, section in sections.items() if area != "comparison"}
    kept_sections = earlier_report.sections_to_keep(area_sections_before, {f["area"] for f in figures} | set(failed), kept_from)
    figures += [f for f in kept if f["area"] not in kept_sections]
    kept_from = {area: run for area, run in kept_from.items() if area not in kept_sections}
    comparison_path, comparison_from, comparison_kept = args.comparison, None, None
    if not (comparison_path and os.path.exists(comparison_path)):
        comparison_path = next((os.path.join(r, "comparison.json") for r in earlier if os.path.exists(os.path.join(r, "comparison.json"))), None)
        comparison_from = read_run_info(os.path.dirname(comparison_path)) if comparison_path else None
        comparison_kept = earlier_report.sections_to_keep(
            {"comparison": sections["comparison"]} if "comparison" in sections else {}, set(),
            {"comparison": comparison_from} if comparison_from else {},
        ).get("comparison")
    verdicts = [(f["area"], f["name"], f["verdict"]) for f in figures]
    verdicts += [(area, name, verdict) for area, section in kept_sections.items() for name, verdict in earlier_report.verdicts(section["body"])]
    passed = sum(verdict == "pass" for _, _, verdict in verdicts)
    missed = [(area, name) for area, name, verdict in verdicts if verdict == "MISS"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `{args.command}` on {now}, commit `{run_commit}`.",
        "",
        f"**Machine:** {info['cores']} cores, {info['cpu']}, {info['memory_gib']} GiB RAM, Linux {info['kernel']}. "
        + (f"Load average when the run began: {args.load_average} (the machine is shared; figures from a busy machine are pessimistic)." if args.load_average else ""),
        "",
        f"Targets met: {passed} of {passed + len(missed)} in the Parley areas"
        + (" — missed: " + "; ".join(f"{area}: {name}" for area, name in missed) if missed else "") + ".",
        "",
        CAPACITY_RULE,
        "",
    ]
    kept_areas = set(kept_from) | set(kept_sections)
    if kept_areas:
        lines += [
            f"Areas measured by this command: {', '.join(sorted({f['area'] for f in figures} - kept_areas)) or 'none'}; "
            f"kept from earlier runs (each section names its run): {', '.join(sorted(kept_areas))}.",
            "",
        ]
    lines += headline.headline_lines(
        figures, kept_sections, run_commit, {area: run.get("commit", "unknown") for area, run in kept_from.items()},
        value_cell, verdict_cell,
        {run.get("commit", "unknown"): run["load_average"] for run in kept_from.values() if run.get("load_average")}
        | ({run_commit: args.load_average} if args.load_average else {}))
    lines += area_sections(figures, failed, args.root, kept_from, kept_sections)
    if comparison_kept:
        lines += ["## Parley vs Pipecat", ""] + earlier_report.provenance_lines(comparison_kept["info"], args.root, "comparison")
        lines += comparison_kept["body"] + [""]
    elif comparison_path:
        with open(comparison_path) as handle:
            comparison = json.load(handle)
        section = comparison_section(comparison, info["cores"])
        if comparison_from:
            section[2:2] = earlier_report.provenance_lines(comparison_from, args.root, "comparison")
        lines += section
        if args.pipecat_version:
            lines += [f"Pipecat: `pipecat-ai[openai,silero,websocket]=={args.pipecat_version}` from PyPI, in its own virtualenv.", ""]
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines).rstrip() + "\n")


if __name__ == "__main__":
    main()
