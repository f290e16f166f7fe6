"""What a run keeps from before for the areas it did not measure (`scripts/bench --keep-earlier`):
the sections of the BENCHMARKS.md written earlier, each with the run it came from, and for any
figures kept from an earlier commit, how much changed on its benchmark's path since."""

import re
import subprocess

# Files every area's figures depend on: the package, the benchmarks' shared rules and their driver.
COMMON_PATHS = [
    "Package.swift", "Benchmarks/Harness", "Benchmarks/ParleyBenchmarks/ParleyBenchmarks.swift",
    "Benchmarks/ParleyBenchmarks/BenchmarkResult.swift",
]
_BENCH = "Benchmarks/ParleyBenchmarks/"
_SERVER_LOAD = [
    _BENCH + "ServerBenchmarks.swift", _BENCH + "ServerLoadProfile.swift", _BENCH + "RealtimeLoadClient.swift",
    _BENCH + "BenchmarkServer.swift", _BENCH + "TurnAudio.swift", _BENCH + "HostSlowdownProbe.swift",
    "Benchmarks/LoadClient/realtime_load_client.c", "Benchmarks/HostProbe", "Benchmarks/FakeUpstream",
    _BENCH + "RealisticUpstream.swift", _BENCH + "DefaultsLatencyBound.swift", _BENCH + "DefaultsQuestion.swift",
]
# The defaults a user gets, served in the benchmark's own process (the phone doors' and WebRTC's
# capacity searches): the hosted-stack upstream and the p99 bound it sets, the providers at it,
# the spoken question.
_DEFAULTS_IN_PROCESS = [
    _BENCH + "DefaultsUpstream.swift", _BENCH + "DefaultsQuestion.swift", _BENCH + "BenchmarkServer.swift",
    _BENCH + "ServerLoadProfile.swift", _BENCH + "RealisticUpstream.swift", _BENCH + "DefaultsLatencyBound.swift",
    "Benchmarks/FakeUpstream", "Sources/ParleyTesting/FakeOpenAI", "Sources/ParleyOpenAI",
]
# The files each area's figures depend on besides COMMON_PATHS: its benchmark and the code it runs.
# The turn-taking areas' code: `turns` and its rerun with Whisper base as the ear.
_TURNS_PATHS = [
    "Sources/ParleyCore", "Sources/ParleyLocal", "Sources/ParleyServer", "Benchmarks/TurnEvaluation",
    _BENCH + "TurnBenchmarks.swift", _BENCH + "TurnEvaluationBenchmarks.swift", _BENCH + "TurnJudgeBenchmarks.swift",
    _BENCH + "InterruptionBenchmarks.swift", _BENCH + "NoiseReductionBenchmarks.swift",
]

# A realtime client holding a conversation in real time (the conversation area and the
# embedded stack's capacity search).
_REALTIME_CONVERSATION = [
    _BENCH + "RealtimeConversation.swift", _BENCH + "PacedMicrophone.swift", _BENCH + "ConversationQuestion.swift",
    _BENCH + "ConversationRecorder.swift",
]

AREA_PATHS = {
    "network": ["Sources/ParleyNet", "Benchmarks/RawLWS", _BENCH + "NetworkBenchmarks.swift"],
    "audio": ["Sources/ParleyCore", _BENCH + "AudioBenchmarks.swift"],
    "realtime": ["Sources/ParleyCore", "Sources/ParleyServer/Realtime", _BENCH + "RealtimeBenchmarks.swift"],
    "agent": ["Sources/ParleyCore", "Sources/ParleyOpenAI", "Sources/ParleyNet", _BENCH + "AgentBenchmarks.swift"],
    "embedded": ["Sources", _BENCH + "EmbeddedBenchmarks.swift", _BENCH + "EmbeddedVoiceBenchmarks.swift"],
    "voice": ["Sources/ParleyLocal", "Sources/ParleyCore", _BENCH + "VoiceBenchmarks.swift"],
    "languages": ["Sources/ParleyLocal", "Sources/ParleyTesting", _BENCH + "LanguageBenchmarks.swift"],
    "turns": _TURNS_PATHS,
    "turns-base-ear": _TURNS_PATHS,
    "conversation": [
        "Sources", _BENCH + "ConversationBenchmarks.swift",
    ] + _REALTIME_CONVERSATION,
    "embedded-capacity": [
        "Sources", _BENCH + "EmbeddedCapacityBenchmarks.swift", _BENCH + "ProcessFigures.swift",
    ] + _REALTIME_CONVERSATION,
    "interruption-plain-client": [
        "Sources", _BENCH + "PlainClientInterruptionBenchmarks.swift", _BENCH + "PacedMicrophone.swift",
        _BENCH + "ConversationQuestion.swift",
    ],
    "session": ["Sources/ParleyCore", _BENCH + "SessionBenchmarks.swift", _BENCH + "InstantProviders.swift"],
    "server": ["Sources"] + _SERVER_LOAD,
    "store": ["Sources/ParleyStore", _BENCH + "StoreBenchmarks.swift"],
    "cluster": ["Sources/ParleyServer", "Sources/ParleyStore", _BENCH + "ClusterBenchmarks.swift"],
    "cluster-capacity": ["Sources", _BENCH + "ClusterCapacityBenchmarks.swift"] + _SERVER_LOAD,
    "webrtc": [
        "Sources/ParleyRTC", "Sources/ParleyServer", "Sources/ParleyCore", "Sources/ParleyLocal",
        "Benchmarks/webrtc_bench_client.py", _BENCH + "WebRTCBenchmarks.swift", _BENCH + "WebRTCCapacitySearch.swift",
        _BENCH + "WebRTCDefaultsBenchmarks.swift", _BENCH + "InstantProviders.swift",
    ] + _DEFAULTS_IN_PROCESS,
    "recordings": ["Sources/ParleyServer", "Sources/ParleyStore", _BENCH + "RecordingBenchmarks.swift"],
    "telephony": [
        "Sources/ParleyServer", "Sources/ParleyLocal", "Sources/ParleyCore", _BENCH + "TelephonyBenchmarks.swift",
        _BENCH + "PhoneCapacityBenchmarks.swift",
    ] + _DEFAULTS_IN_PROCESS,
    "sip": [
        "Sources/ParleySIP", "Sources/ParleyServer", "Sources/ParleyLocal", "Sources/ParleyCore",
        _BENCH + "SIPBenchmarks.swift", _BENCH + "TelephonyBenchmarks.swift", _BENCH + "PhoneCapacityBenchmarks.swift",
    ] + _DEFAULTS_IN_PROCESS,
    "comparison": [
        "Sources", "Benchmarks/LoadClient", "Benchmarks/Pipecat", "Benchmarks/FakeUpstream",
        _BENCH + "BenchmarkServer.swift",
    ],
}

_HEADING = re.compile(r"^## (?:.*\(`(?P<area>[\w-]+)`\)|(?P<comparison>Parley vs Pipecat))\s*$")
_HEADER = re.compile(r"^Written by `.*` on (?P<started>.+?), commit `(?P<commit>[^`]+)`\.")
_HEADER_LOAD = re.compile(r"Load average when the run began: (?P<load>[\d.]+ [\d.]+ [\d.]+)")
_PROVENANCE = re.compile(
    r"^\*Not rerun by this command: .*?run of (?P<started>.+?), commit `(?P<commit>[^`]+)`"
    r"(?:, load average (?P<load>.+?) when it began)?\.\*$"
)
_CHANGES = re.compile(r"^\*(Since commit|No file on this benchmark's path|Commit `[^`]+` is not in)")
_VERDICT_ROW = re.compile(r"^\| (?P<name>.+?) \|.*\| (?P<verdict>pass|\*\*MISS\*\*) \|$")


def read_sections(path):
    """The sections of an earlier BENCHMARKS.md, by area ("comparison" for Parley vs Pipecat):
    each {"info": the run it came from, "body": its lines after the heading, without its notes
    on where it came from}. A section without such a note came from the run that wrote the file."""
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return {}
    document = {"started": "unknown", "commit": "unknown"}
    for line in lines[:10]:
        header = _HEADER.match(line)
        if header:
            document = {"started": header["started"], "commit": header["commit"]}
        load = _HEADER_LOAD.search(line)
        if load:
            document["load_average"] = load["load"]
    sections, area = {}, None
    for line in lines:
        if line.startswith("## "):
            heading = _HEADING.match(line)
            area = (heading["area"] or "comparison") if heading else None
            if area:
                sections[area] = {"info": dict(document), "body": []}
            continue
        if area is None:
            continue
        provenance = _PROVENANCE.match(line)
        if provenance:
            sections[area]["info"] = {"started": provenance["started"], "commit": provenance["commit"]}
            if provenance["load"]:
                sections[area]["info"]["load_average"] = provenance["load"]
        elif not _CHANGES.match(line):
            sections[area]["body"].append(line)
    for section in sections.values():
        section["body"] = _collapse_blank_lines(section["body"])
    return sections


def sections_to_keep(sections, measured, kept_from):
    """The sections of areas not `measured` now that no newer earlier run directory has
    (`kept_from`: the run each area's kept figures came from)."""
    def newer(section, area):
        run = kept_from.get(area)
        started = section["info"]["started"]
        return run is None or (started != "unknown" and started > run.get("started", ""))

    return {area: section for area, section in sections.items() if area not in measured and newer(section, area)}


def _collapse_blank_lines(lines):
    """`lines` without blank lines at either end or in a row (left by the notes taken out)."""
    kept = []
    for line in lines:
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def verdicts(body):
    """(figure name, "pass" or "MISS") of each row of a section's tables that has a verdict."""
    rows = (_VERDICT_ROW.match(line) for line in body)
    return [(row["name"], "MISS" if row["verdict"] == "**MISS**" else "pass") for row in rows if row]


def changes_since(root, commit, paths):
    """(commits, files) that changed `paths` between `commit` and HEAD in the repository at
    `root`; None when git does not know the commit."""
    def git(*arguments):
        return subprocess.run(["git", "-C", root, *arguments], capture_output=True, text=True)

    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        return None
    commits = git("log", "--oneline", f"{commit}..HEAD", "--", *paths).stdout.splitlines()
    files = git("diff", "--name-only", commit, "HEAD", "--", *paths).stdout.splitlines()
    return len(commits), len(files)


def provenance_lines(info, root, area):
    """The notes a kept section starts with: which run its figures came from, and what changed
    on its benchmark's path (`AREA_PATHS`) since that run's commit."""
    load = f", load average {info['load_average']} when it began" if info.get("load_average") else ""
    lines = [f"*Not rerun by this command: figures from the earlier run of {info['started']}, commit `{info['commit']}`{load}.*", ""]
    paths = COMMON_PATHS + AREA_PATHS.get(area, ["Sources", "Benchmarks"])
    changed = changes_since(root, info["commit"], paths)
    if changed is None:
        lines.append(f"*Commit `{info['commit']}` is not in this repository's history: what changed on this benchmark's path since is unknown.*")
    elif changed == (0, 0):
        lines.append(f"*No file on this benchmark's path changed since `{info['commit']}`.*")
    else:
        listed = ", ".join(f"`{path}`" for path in paths)
        lines.append(
            f"*Since commit `{info['commit']}`, {changed[0]} commit{'s' * (changed[0] != 1)} changed {changed[1]} "
            f"file{'s' * (changed[1] != 1)} on this benchmark's path ({listed}); "
            f"`git log --oneline {info['commit']}..HEAD -- <those paths>` lists them.*"
        )
    return lines + [""]
