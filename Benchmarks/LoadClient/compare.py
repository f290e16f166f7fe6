#!/usr/bin/env python3
"""Parley vs Pipecat on the same work, on the same machine, in the same run.

For each system and each session count N starts a fresh fake upstream (FakeUpstream, the
same fixed delays for both systems) and a fresh server process, warms the server up with one
unmeasured session of one turn, drives it with the load client (loadclient.py) and stops both.
A count holds when every session connected, at least 99 % of the turns were answered and the
p99 end of speech -> first audio is under 1 s. The counts follow the rule every capacity figure
uses (capacity_search.py): 1, 10, 50, 100, then doubling until a count fails (a failure counts
only when a second run at the count fails too), then bisection between the largest count that
held and the smallest that failed until they are within 10 %. Like for like, Parley runs
without preemptive transcription and generation (Pipecat has neither); the same N = 1 run with
them on (Parley's default) is reported beside it. With --profile, the Parley server is sampled
with `perf` during a run at the largest count it held (at least 50). Writes comparison.json to
--out.
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capacity_search  # noqa: E402
import loadclient  # noqa: E402

SECRET = "parley-benchmark-secret-0123456789"
P99_LIMIT_MS = 1000


def say(message):
    print(f"    {message}", file=sys.stderr, flush=True)


class Child:
    """A server process that prints `listening on ADDRESS` when it is ready."""

    def __init__(self, command, log_path, timeout=90):
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, start_new_session=True)
        deadline = time.monotonic() + timeout
        self.address = None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            text = line.decode(errors="replace").strip()
            if text.startswith("listening on "):
                self.address = text[len("listening on "):]
                break
        if self.address is None:
            self.stop()
            raise RuntimeError(f"{command[0]} did not start; see {log_path}")

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        """Stops the server and every process it started (its process group: a server's worker
        processes left running would take CPU from the next run)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.log.close()


def holds(result):
    """Whether a run held its count: every session connected, at least 99 % of the turns were
    answered, and the p99 end of speech -> first audio is under the limit."""
    p99 = result["first_audio_ms"]["p99"]
    return (
        result["connected"] == result["sessions"]
        and result["turns"] > 0
        and result["answered"] >= 0.99 * result["turns"]
        and p99 is not None
        and p99 < P99_LIMIT_MS
    )


def server_command(system, args, upstream):
    if system == "parley":
        return [args.parley_benchmarks, "serve", "--upstream", upstream, "--secret", SECRET, "--vad", args.parley_vad,
                "--preemptive-transcription-ms", str(args.parley_preemptive_ms)]
    return [args.pipecat_python, args.pipecat_server, "--upstream", upstream, "--silence-ms", str(args.silence_ms),
            "--vad-confidence", str(args.vad_threshold)]


def start_upstream(args):
    delays = args.upstream_delays
    return Child(
        [
            args.fake_upstream, "--reply", args.reply,
            "--transcription-ms", str(delays["transcription_ms"]),
            "--first-token-ms", str(delays["first_token_ms"]),
            "--tokens-per-second", str(delays["tokens_per_second"]),
            "--speech-first-byte-ms", str(delays["speech_first_byte_ms"]),
            "--speech-audio-ms", str(delays["speech_audio_ms"]),
        ],
        os.path.join(args.out, "fake-upstream.log"),
    )


def run_once(system, sessions, args, profile_path=None):
    upstream = start_upstream(args)
    try:
        return run_against(system, sessions, args, upstream.address, profile_path)
    finally:
        upstream.stop()


def run_against(system, sessions, args, upstream, profile_path):
    server = Child(server_command(system, args, upstream), os.path.join(args.out, f"{system}-server.log"))
    profiler = None
    try:
        if profile_path:
            profiler = subprocess.Popen(
                ["perf", "record", "-F", "499", "-g", "-p", str(server.pid), "-o", profile_path],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        # The warm-up, the same for both systems: one session of one turn, not measured.
        asyncio.run(loadclient.run(client_arguments(system, server, 1, 1, args)))
        turns = args.single_session_turns if sessions == 1 else args.turns
        result = asyncio.run(loadclient.run(client_arguments(system, server, sessions, turns, args)))
    finally:
        if profiler:
            profiler.send_signal(signal.SIGINT)
            profiler.wait()
        server.stop()
    result["held"] = holds(result)
    p50, p99 = result["first_audio_ms"]["p50"], result["first_audio_ms"]["p99"]
    say(
        f"{system:8s} N={sessions:<4d} p50 {fmt(p50)} ms  p99 {fmt(p99)} ms  answered {result['answered']}/{result['turns']}"
        f"  cpu {result['server_cpu_seconds']:.1f} s (waited {result['server_run_queue_wait_seconds']:.1f} s)  peak rss {result['server_rss_kb']['peak'] // 1024} MiB"
        f"  client late ticks {result['pacing']['late_ticks']}{'' if result['held'] else '  (failed)'}"
        + (f"  [endpointing p50 {fmt(result['endpointing_ms']['p50'])} ms, then {fmt(result['after_turn_end_ms']['p50'])} ms]"
           if result["endpointing_ms"]["p50"] is not None else "")
    )
    return result


def client_arguments(system, server, sessions, turns, args):
    """The load client's settings for `sessions` sessions of `turns` turns against `server`."""
    return SimpleNamespace(
        system=system, url=server.address, token=SECRET if system == "parley" else "",
        sessions=sessions, turns=turns, turn_period_ms=args.turn_period_ms, utterance=args.utterance,
        lead_ms=300, dither=16, silence_ms=args.silence_ms, vad_threshold=args.vad_threshold,
        reply_audio_ms=args.reply_audio_ms, server_pid=server.pid, seed=7,
    )


def fmt(value):
    return "-" if value is None else f"{value:.0f}"


def compare(system, args):
    """The system's capacity search: every run (the last one at each count) and the bracket."""
    bracket = capacity_search.search(
        lambda sessions: run_once(system, sessions, args), lambda result: result["held"], args.counts, args.max_sessions,
        args.precision,
    )
    runs = {str(run["count"]): run["figures"] for run in bracket["runs"]}
    search = {
        "trials": [{"sessions": run["count"], "held": run["held"]} for run in bracket["runs"]],
        "largest_held": bracket["held"]["count"] if bracket["held"] else None,
        "smallest_failed": bracket["failed"]["count"] if bracket["failed"] else None,
        "first_count_failed": bracket["first_count_failed"],
        "precision": args.precision,
        "ceiling": args.max_sessions,
        "summary": capacity_search.summary(bracket),
    }
    say(f"{system}: {search['summary']}")
    return {"runs": dict(sorted(runs.items(), key=lambda item: int(item[0]))), "search": search}


def profile_parley(args, sessions):
    """Samples the Parley server with perf during a run at `sessions` and summarises where
    its CPU time goes (flat, by symbol)."""
    path = os.path.join(args.out, "parley-perf.data")
    run_once("parley", sessions, args, profile_path=path)
    report = subprocess.run(
        ["perf", "report", "-i", path, "--stdio", "--no-children", "--sort", "dso,symbol", "--percent-limit", "1.5"],
        capture_output=True, text=True,
    )
    lines = [line for line in report.stdout.splitlines() if line.strip() and not line.startswith("#") and "%" in line and not line.lstrip().startswith("|") and not line.lstrip().startswith("-")]
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(lines), capture_output=True, text=True)
    text = demangled.stdout if demangled.returncode == 0 else "\n".join(lines)
    return {"sessions": sessions, "top": [line.rstrip()[:160] for line in text.splitlines()[:25]]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fake-upstream", required=True, help="the FakeUpstream executable")
    parser.add_argument("--parley-benchmarks", required=True, help="the ParleyBenchmarks executable (its serve mode)")
    parser.add_argument("--pipecat-python", required=True, help="python of the Pipecat virtualenv")
    parser.add_argument("--pipecat-server", required=True, help="Benchmarks/Pipecat/pipecat_server.py")
    parser.add_argument("--utterance", required=True, help="16-bit mono WAV of the user's speech")
    parser.add_argument("--out", required=True, help="folder for results and logs")
    parser.add_argument("--quick", action="store_true", help="fewer turns and a lower ceiling")
    parser.add_argument("--profile", action="store_true", help="sample the Parley server with perf")
    parser.add_argument("--systems", default="parley,pipecat")
    parser.add_argument("--parley-vad", default="silero", choices=["silero", "energy"], help="Parley's VAD (Pipecat uses Silero)")
    parser.add_argument("--parley-preemptive-ms", type=int, default=0,
                        help="Parley's preemptive transcription delay in the comparison (default 0: like Pipecat, transcribe "
                             "only once the turn has ended; the N = 1 run with Parley's default of 30 ms is reported beside it)")
    parser.add_argument("--counts", help="the capacity search's first counts, before it doubles "
                        "(default 1,10,50,100; 1,10,50 with --quick)")
    args = parser.parse_args()

    args.counts = [int(n) for n in (args.counts or ("1,10,50" if args.quick else "1,10,50,100")).split(",")]
    args.silence_ms = 300
    # Both VADs count a frame as speech from this Silero probability (Pipecat's default).
    args.vad_threshold = 0.7
    args.turn_period_ms = 5000
    args.single_session_turns = 3 if args.quick else 10
    args.turns = 2 if args.quick else 4
    args.max_sessions = 400 if args.quick else 1600
    # A quick run bisects only until the two ends are within 50 %.
    args.precision = 0.5 if args.quick else 0.1
    args.upstream_delays = upstream_delays = {"transcription_ms": 50, "first_token_ms": 100, "tokens_per_second": 100, "speech_first_byte_ms": 50, "speech_audio_ms": 500}
    args.reply = reply = "It is sunny and mild in Paris today. Expect a light breeze this evening."
    sentences = 2
    args.reply_audio_ms = sentences * upstream_delays["speech_audio_ms"]
    # Tokens of the first sentence after the first one, at the token rate.
    first_sentence_tokens = len(reply.split(".")[0].split()) - 1
    floor_ms = (
        args.silence_ms + upstream_delays["transcription_ms"] + upstream_delays["first_token_ms"]
        + first_sentence_tokens * 1000 / upstream_delays["tokens_per_second"] + upstream_delays["speech_first_byte_ms"]
    )
    os.makedirs(args.out, exist_ok=True)
    comparison = {
        "settings": {
            "silence_window_ms": args.silence_ms, "upstream": upstream_delays, "reply": reply,
            "floor_ms": floor_ms, "turn_period_ms": args.turn_period_ms, "frame_ms": loadclient.FRAME_MS,
            "turns_per_session": args.turns, "single_session_turns": args.single_session_turns,
            "p99_limit_ms": P99_LIMIT_MS, "parley_vad": args.parley_vad,
            "vad_threshold": args.vad_threshold, "parley_preemptive_transcription_ms": args.parley_preemptive_ms,
        },
        "systems": {},
    }
    for system in args.systems.split(","):
        say(f"{system}:")
        comparison["systems"][system] = compare(system, args)
    if "parley" in comparison["systems"]:
        # The other setting of Parley's preemption at N = 1: on (its default) when the
        # comparison ran without it, off otherwise.
        saved = args.parley_preemptive_ms
        args.parley_preemptive_ms = 30 if saved == 0 else 0
        key = "parley_with_preemption" if saved == 0 else "parley_without_preemption"
        say(f"parley {key.replace('_', ' ').removeprefix('parley ')}:")
        comparison[key] = run_once("parley", 1, args)
        args.parley_preemptive_ms = saved
    if args.profile and "parley" in comparison["systems"]:
        # Under load, where a profile says the most: the largest count held, and at least 50.
        best = max(comparison["systems"]["parley"]["search"]["largest_held"] or 0, 50)
        say(f"profiling the Parley server at N={best} with perf")
        comparison["parley_profile"] = profile_parley(args, best)
    with open(os.path.join(args.out, "comparison.json"), "w") as handle:
        json.dump(comparison, handle, indent=1)


if __name__ == "__main__":
    main()
