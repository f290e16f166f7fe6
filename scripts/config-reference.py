#!/usr/bin/env python3
"""Writes docs/configuration.md, the configuration reference, from the code.

What is extracted from the code, so it cannot drift:
  - every `PARLEY_*` and `OTEL_*` name inside a Swift string literal under Sources/ (including
    the `PARLEY_\\(kind)_URL` family that ServerSettings.load builds from `provider("ASR", …)`);
  - every user-settable `${PARLEY_*:-default}` of the scripts under scripts/;
  - every `parley serve` option and its help text, from ServeLauncher's CommandSpec;
  - the defaults of the settings whose variable maps to a property below (`prop`), read from the
    property's initial value in the Swift source.

What is written here: each variable's meaning (and a default where the code's is not a plain
literal). The run fails when a variable in the code has no entry here, or an entry names a
variable the code no longer has, so a new setting cannot land undocumented.

  scripts/config-reference.py            # rewrite docs/configuration.md
  scripts/config-reference.py --check    # fail if docs/configuration.md is not what it would write
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "configuration.md"
SETTINGS = "Sources/ParleyServer/Configuration/ServerSettings.swift"
SERVE_SPEC = "Sources/ParleyCLI/Commands/ServeLauncher.swift"

# Groups, in the order they are written.
GROUPS = [
    ("server", "Where it listens and keeps its data", None),
    ("models", "Models and voices", "models.md"),
    ("turns", "Turns and replies", "turn-taking.md"),
    ("limits", "Tokens and limits", "security.md"),
    ("webrtc", "WebRTC", "webrtc.md"),
    ("telephony", "Phone calls", "telephony.md"),
    ("tools", "Tools and outbound requests", "tools-and-mcp.md"),
    ("recordings", "Recordings and metrics", "recordings-and-traces.md"),
    ("cluster", "Cluster mode", "deployment.md"),
    ("engines", "Where the embedded engines are", "models.md#where-the-embedded-engines-are-found"),
    ("traces", "Traces (OpenTelemetry)", "recordings-and-traces.md#traces"),
    ("cli", "The command-line client", "quick-start.md#use-the-command-line"),
    ("diagnostics", "Diagnostics", None),
    ("scripts", "Scripts and tests", "development.md"),
]

# name: group, meaning, and either `prop` (a property of `type` whose initial value is the
# default; ServerSettings unless named) or `default` (text, when the code's is not a literal).
VARIABLES = {
    # server
    "PARLEY_HOST": dict(group="server", prop="host", flag="--host",
        meaning="The address to listen on. Beyond loopback a server secret is required and local tokens are off."),
    "PARLEY_PORT": dict(group="server", prop="port", flag="--port",
        meaning="The port to listen on (0 picks a free one)."),
    "PARLEY_DATA_DIR": dict(group="server", default="`./.parley`", flag="--data-dir",
        meaning="Where the SQLite database, the generated server secret and the recordings are kept."),
    "PARLEY_WEB_ROOT": dict(group="server", default="`./Web`", flag="--web-root",
        meaning="The folder of the web client served at `/`."),
    "PARLEY_SERVER_SECRET": dict(group="server", default="generated into `<data dir>/server-secret`",
        meaning="The backend secret: authorises the REST API and signs client tokens; at least 16 characters; required when listening beyond loopback. Give every node of a cluster the same one."),
    "PARLEY_DATABASE_URL": dict(group="server", default="none (SQLite)", flag="--database-url",
        meaning="A `postgresql://user:password@host:5432/database` URL (libpq's syntax, e.g. `?sslmode=require`): agents, instances, conversations and items live in that PostgreSQL instead of `parley.sqlite`, and the server is a node of a cluster. `scripts/postgres start` runs a throwaway local one and prints its URL."),
    "PARLEY_TLS_CERT": dict(group="server", default="none (plain HTTP)", flag="--tls-cert",
        meaning="A PEM certificate (chain): serve HTTPS and WSS with it. Needs `PARLEY_TLS_KEY`."),
    "PARLEY_TLS_KEY": dict(group="server", default="none", flag="--tls-key",
        meaning="The PEM private key of `PARLEY_TLS_CERT`."),
    "PARLEY_SYSTEM_PROMPT": dict(group="server", default="one that suits the model",
        meaning="The default agent's instructions."),
    # models
    "PARLEY_LLM_MODEL_PATH": dict(group="models", default="none (the bundled SmolLM2)", flag="--llm-model",
        meaning="A GGUF model of your own for the embedded llama-server. Excludes `PARLEY_LLM_URL`."),
    "PARLEY_LLM": dict(group="models", default="`llama` (embedded)",
        meaning="The language model provider: `llama` or `embedded`, or `openai` (an OpenAI-compatible endpoint; implied by `PARLEY_LLM_URL`)."),
    "PARLEY_LLM_URL": dict(group="models", default="none",
        meaning="An OpenAI-compatible chat endpoint (OpenAI, Groq, Ollama, vLLM, llama.cpp, LocalAI) instead of the embedded SmolLM2, e.g. `http://127.0.0.1:11434/v1`."),
    "PARLEY_LLM_MODEL": dict(group="models", default="none (required with `PARLEY_LLM_URL`)",
        meaning="The model name at `PARLEY_LLM_URL`."),
    "PARLEY_LLM_API_KEY": dict(group="models", default="none",
        meaning="The API key of `PARLEY_LLM_URL`, when it wants one."),
    "PARLEY_ASR": dict(group="models", default="`whisper` (embedded)",
        meaning="The speech-to-text provider: `whisper` or `embedded`, or `openai` (implied by `PARLEY_ASR_URL`)."),
    "PARLEY_ASR_URL": dict(group="models", default="none",
        meaning="An OpenAI-compatible transcription endpoint instead of whisper.cpp."),
    "PARLEY_ASR_MODEL": dict(group="models", default="`tiny.en`; `whisper-1` with `PARLEY_ASR_URL`",
        meaning="The embedded Whisper model, `tiny.en` (English only) or `base` (multilingual; tiny.en hears when it cannot load), or with `PARLEY_ASR_URL` the remote transcription model's name."),
    "PARLEY_ASR_API_KEY": dict(group="models", default="none",
        meaning="The API key of `PARLEY_ASR_URL`."),
    "PARLEY_TTS": dict(group="models", default="`piper`",
        meaning="The embedded voice: `piper` (the neural voice; flite when it cannot load) or `flite`; `openai` is implied by `PARLEY_TTS_URL`."),
    "PARLEY_TTS_URL": dict(group="models", default="none",
        meaning="An OpenAI-compatible speech endpoint instead of the embedded voice."),
    "PARLEY_TTS_MODEL": dict(group="models", default="`tts-1` with `PARLEY_TTS_URL`",
        meaning="The speech model name at `PARLEY_TTS_URL`."),
    "PARLEY_TTS_API_KEY": dict(group="models", default="none",
        meaning="The API key of `PARLEY_TTS_URL`."),
    "PARLEY_TTS_VOICE": dict(group="models", default="the service's own",
        meaning="The voice at `PARLEY_TTS_URL`."),
    "PARLEY_VAD": dict(group="models", prop="voiceActivityDetector",
        meaning="The voice activity detector: `silero` or `energy`."),
    # turns
    "PARLEY_MAX_OUTPUT_TOKENS": dict(group="turns", default="150 with the embedded SmolLM2; none with `PARLEY_LLM_URL`",
        meaning="The longest reply, in tokens, when neither the agent nor the client sets one (SmolLM2 can fall into repeating itself)."),
    "PARLEY_OUTPUT_TOKEN_CEILING": dict(group="turns", prop="outputTokenCeiling",
        meaning="The most tokens any response may have, whatever a client asks for (`\"inf\"` included)."),
    "PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": dict(group="turns", prop="preemptiveTranscriptionAfterMs",
        meaning="Silence after which a hands-free turn is transcribed while the silence window still runs; 0 waits for the turn's end, e.g. to save paid transcription calls."),
    "PARLEY_PREEMPTIVE_GENERATION": dict(group="turns", prop="preemptiveGeneration",
        meaning="`on` starts the reply on that early transcript, held back until the turn ends and dropped if the user goes on (agents without tools only); `off` waits for the turn's end, e.g. to save paid LLM calls."),
    "PARLEY_WEBSOCKET_AUDIO_LEAD_MS": dict(group="turns", prop="webSocketAudioLeadMs",
        meaning="How far ahead of real time a realtime WebSocket client's speech is sent, in ms. A client that just plays what it gets (openai-agents, Pipecat, LiveKit) then holds at most this much when the user talks over the agent, so the server's hold and cancellation stop what the listener hears; the events of a response keep their order behind its speech. `0` sends speech as fast as it is made."),
    # limits
    "PARLEY_MAX_SESSIONS": dict(group="limits", prop="maximumSessions",
        meaning="The most concurrent sessions on this node (WebRTC calls and phone calls count)."),
    "PARLEY_MAX_SESSIONS_PER_USER": dict(group="limits", prop="maximumSessionsPerUser",
        meaning="The most sessions one user (a client token's subject; a phone call's calling number) holds at once, on every door together; refused with 429 `too_many_sessions_for_user`."),
    "PARLEY_MAX_SESSIONS_PER_TOKEN": dict(group="limits", prop="maximumSessionsPerToken",
        meaning="The most sessions one client token holds at once; refused with 429 `too_many_sessions_for_token`."),
    "PARLEY_MAX_SESSION_SECONDS": dict(group="limits", prop="maximumSessionLength",
        meaning="The longest a session or phone call lasts before the server ends it with the error `session_expired` (as OpenAI's)."),
    "PARLEY_TOKEN_RATE_PER_MINUTE": dict(group="limits", prop="tokenMintsPerMinute",
        meaning="Client tokens minted per minute per client address (across nodes in cluster mode)."),
    "PARLEY_LOCAL_TOKENS": dict(group="limits", default="on (on loopback only)",
        meaning="`false` turns `POST /v1/local/token` off; it is never on beyond loopback or with `PARLEY_PUBLIC_URL`."),
    # webrtc
    "PARLEY_WEBRTC_PORT": dict(group="webrtc", prop="webRTCPort",
        meaning="The UDP port of every WebRTC call; 0 picks a free one at the first call."),
    "PARLEY_WEBRTC_PUBLIC_ADDRESS": dict(group="webrtc", default="the listening host",
        meaning="The IPv4 address WebRTC peers reach the server at, when it is not the listening host (behind NAT, or listening on 0.0.0.0). Parley answers ICE-lite with host candidates only, so peers behind restrictive NATs bring their own STUN/TURN."),
    "PARLEY_WEBRTC_ICE_SERVERS": dict(group="webrtc", default="none",
        meaning="STUN and TURN servers for the web page's calls, as a JSON array of `{\"urls\", \"username\", \"credential\"}`, handed to the page with its local token."),
    # telephony
    "PARLEY_PUBLIC_URL": dict(group="telephony", default="none",
        meaning="The https URL Twilio (and other outside callers) reach the server at; setting it turns local tokens off."),
    "PARLEY_TWILIO_AUTH_TOKEN": dict(group="telephony", default="none (phone calls refused)",
        meaning="The Twilio account's auth token, which verifies every call webhook's signature."),
    "PARLEY_SIP_PORT": dict(group="telephony", default="none (the SIP door is closed)",
        meaning="The SIP port, UDP and TCP, on `PARLEY_HOST`; 0 picks a free one. Calls are taken only from the trunks below."),
    "PARLEY_SIP_TRUNKS": dict(group="telephony", default="none",
        meaning="Comma-separated addresses or CIDR blocks (e.g. `203.0.113.0/24`) of SIP trunks whose calls are taken without a challenge; calls from anywhere else must pass digest authentication, or are refused (403) and counted."),
    "PARLEY_SIP_USERNAME": dict(group="telephony", default="none",
        meaning="The digest username a trunk calling from elsewhere authenticates with (with `PARLEY_SIP_PASSWORD`; realm `parley`)."),
    "PARLEY_SIP_PASSWORD": dict(group="telephony", default="none",
        meaning="The digest password of `PARLEY_SIP_USERNAME`."),
    "PARLEY_SIP_MEDIA_ADDRESS": dict(group="telephony", default="the address each INVITE arrived on",
        meaning="The IP address SDP answers give for the call's audio, when callers reach the server at another one (behind NAT)."),
    "PARLEY_SIP_RTP_PORTS": dict(group="telephony", default="10000-20000",
        meaning="The UDP port range each SIP call's RTP binds in (one port per call)."),
    "PARLEY_SIP_INVITES_PER_SECOND": dict(group="telephony", default="20",
        meaning="New SIP calls (INVITEs) a second each source address may start, with a burst of twice as many; beyond it INVITEs get `503` with `Retry-After: 1` and are counted (`invite_rate_exceeded`), so a flood costs one short reply per packet. Raise it for a trunk that sends more calls a second."),
    "PARLEY_SIP_WEBHOOK_URL": dict(group="telephony", default="none (calls go to the agent of the called number)",
        meaning="Where each ringing SIP call is announced with a signed `realtime.call.incoming` event, as OpenAI does; the backend then answers `POST /v1/realtime/calls/{call_id}/accept` or `/reject` within 30 s, or the call is refused (480)."),
    "PARLEY_SIP_OUTBOUND_TRUNK": dict(group="telephony", default="none (`POST /v1/calls` answers 400)",
        meaning="The SIP trunk calls placed with `POST /v1/calls` go through, as a SIP URI (e.g. `sip:sip.example.com` or `sip:203.0.113.5:5060;transport=tcp`); each INVITE is sent to it as an outbound proxy (a loose route), with the callee's URI as its request URI. Needs `PARLEY_SIP_PORT`."),
    "PARLEY_SIP_OUTBOUND_USERNAME": dict(group="telephony", default="none",
        meaning="The digest username Parley answers the outbound trunk's challenge (401 or 407) with (with `PARLEY_SIP_OUTBOUND_PASSWORD`)."),
    "PARLEY_SIP_OUTBOUND_PASSWORD": dict(group="telephony", default="none",
        meaning="The digest password of `PARLEY_SIP_OUTBOUND_USERNAME`."),
    "PARLEY_SIP_CALLER_ID": dict(group="telephony", default="`parley`",
        meaning="The user part of `From` on calls Parley places, usually the E.164 number the trunk lets you call from (e.g. `+14155550100`)."),
    "PARLEY_SIP_WEBHOOK_SECRET": dict(group="telephony", default="none (required with the webhook URL)",
        meaning="The Standard Webhooks secret the call events are signed with (`whsec_` and base64, as OpenAI's, or any text)."),
    # tools
    "PARLEY_MCP_CLIENT_SERVERS": dict(group="tools", prop="clientsNameMCPServers",
        meaning="`on` lets sessions opened with a client token name MCP servers of their own in `session.tools` (the server then calls the public URLs a token holder gives it); off, only the backend and agents name them."),
    "PARLEY_OUTBOUND_ALLOW": dict(group="tools", default="none",
        meaning="Comma-separated CIDR blocks (e.g. `10.1.0.0/16,fd00:1::/64`) of non-public addresses that URLs a client names may still reach; without it, client-named URLs resolving to loopback, private, link-local, metadata and other non-public addresses are refused (the operator's own URLs are never checked)."),
    # recordings
    "PARLEY_RECORDINGS": dict(group="recordings", prop="recordsCalls",
        meaning="`on` records every conversation whose agent does not say otherwise."),
    "PARLEY_RECORDINGS_RETENTION_DAYS": dict(group="recordings", type="RecordingLimits", prop="retentionDays",
        meaning="Recordings last written more than this many days ago are removed; `0` or `forever` keeps them."),
    "PARLEY_RECORDINGS_QUOTA_MB": dict(group="recordings", default="1024",
        meaning="While all recordings together take more than this many MB (of 1,048,576 bytes), the oldest are removed, never one being written; `0` or `unlimited` for no quota."),
    "PARLEY_METRICS_TOKEN": dict(group="recordings", default="none (`/metrics` open)",
        meaning="When set (16 characters at least), `GET /metrics` needs `Authorization: Bearer` with this token or the server secret and answers anything else with 401."),
    # cluster
    "PARLEY_CLUSTER_MAX_SESSIONS": dict(group="cluster", default="none",
        meaning="The most sessions across every node; `PARLEY_MAX_SESSIONS` stays each node's cap. Needs `PARLEY_DATABASE_URL`."),
    "PARLEY_NODE_URL": dict(group="cluster", default="`http://HOST:PORT`",
        meaning="The URL other nodes and operators reach this node at."),
    "PARLEY_DRAIN_SECONDS": dict(group="cluster", prop="drainSeconds",
        meaning="How long a node stopped with SIGTERM keeps serving its live sessions while it refuses new ones; those still running then are closed and their clients reconnect through another node."),
    # engines
    "PARLEY_MODEL_DIR": dict(group="engines", default="set by `scripts/run`: `~/.cache/parley/models`",
        meaning="The folder of the embedded models (Whisper, Silero, SmolLM2, Smart Turn, the Piper voice)."),
    "PARLEY_LLAMA_SERVER": dict(group="engines", default="set by `scripts/run`: `~/.cache/parley/prefix/bin/llama-server`",
        meaning="The llama-server program Parley supervises."),
    "PARLEY_ONNXRUNTIME_LIBRARY": dict(group="engines", default="set by `scripts/run`: `~/.cache/parley/prefix/lib/libonnxruntime.so`",
        meaning="onnxruntime's shared library, loaded at run time for the Piper voice and Smart Turn."),
    # traces
    "OTEL_EXPORTER_OTLP_ENDPOINT": dict(group="traces", default="none (no traces)",
        meaning="The OTLP/HTTP base URL (e.g. `http://127.0.0.1:4318`); traces go to `{endpoint}/v1/traces`."),
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": dict(group="traces", default="none",
        meaning="The full traces URL, used as is (before `OTEL_EXPORTER_OTLP_ENDPOINT`)."),
    "OTEL_EXPORTER_OTLP_HEADERS": dict(group="traces", default="none",
        meaning="Headers sent with each export, `key=value,…` (e.g. a collector's API key)."),
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": dict(group="traces", default="none",
        meaning="The same, for traces only."),
    "OTEL_EXPORTER_OTLP_TIMEOUT": dict(group="traces", type="OTLPConfiguration", prop="timeout",
        meaning="How long one export may take, in milliseconds."),
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": dict(group="traces", default="`OTEL_EXPORTER_OTLP_TIMEOUT`",
        meaning="The same, for traces only."),
    "OTEL_EXPORTER_OTLP_PROTOCOL": dict(group="traces", default="`http/json`",
        meaning="Only `http/json` is supported; anything else is reported at start."),
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": dict(group="traces", default="`http/json`",
        meaning="The same, for traces only."),
    "OTEL_SERVICE_NAME": dict(group="traces", type="OTLPConfiguration", prop="serviceName",
        meaning="The resource's `service.name`."),
    "OTEL_BSP_SCHEDULE_DELAY": dict(group="traces", type="OTLPConfiguration", prop="scheduleDelay",
        meaning="How often batched spans are sent, in milliseconds."),
    "OTEL_BSP_MAX_QUEUE_SIZE": dict(group="traces", type="OTLPConfiguration", prop="maxQueueSize",
        meaning="The most spans waiting; beyond it spans are dropped (counted, and logged as `traces.export_failed`)."),
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": dict(group="traces", type="OTLPConfiguration", prop="maxExportBatchSize",
        meaning="The most spans in one export."),
    "OTEL_SDK_DISABLED": dict(group="traces", default="`false`",
        meaning="`true` exports no traces."),
    "OTEL_TRACES_EXPORTER": dict(group="traces", default="`otlp`",
        meaning="`none` exports no traces."),
    # cli
    "PARLEY_URL": dict(group="cli", default="`http://127.0.0.1:8080`",
        meaning="The server `parley agents`, `parley twilio` and the demo app talk to when `--url` is not given."),
    # diagnostics
    "PARLEY_LWS_LOG": dict(group="diagnostics", default="errors only",
        meaning="libwebsockets' log level bitmask, e.g. `15` for errors to notices."),
    # scripts and tests (read by scripts/*, not by parley)
    "PARLEY_CACHE": dict(group="scripts", default="`~/.cache/parley`",
        meaning="Where setup keeps Debian-independent downloads, built engines, the Python virtualenv and the models."),
    "PARLEY_PYTHON": dict(group="scripts", default="the virtualenv's `python`",
        meaning="The Python the tests run their harnesses with."),
    "PARLEY_BUILD_JOBS": dict(group="scripts", default="the number of cores",
        meaning="Parallel jobs of setup's whisper.cpp and llama.cpp builds."),
    "PARLEY_CLUSTER_BUILD": dict(group="scripts", default="`release`",
        meaning="The build `scripts/cluster` runs."),
    "PARLEY_CLUSTER_PORT": dict(group="scripts", default="8080",
        meaning="The port of every node `scripts/cluster` starts."),
    "PARLEY_IMAGE": dict(group="scripts", default="`localhost/parley:latest`",
        meaning="The container image `scripts/image` builds and `ContainerImageTests` runs."),
    "PARLEY_POSTGRES_BIN": dict(group="scripts", default="`/usr/lib/postgresql/15/bin`",
        meaning="Where `scripts/postgres` finds PostgreSQL's programs."),
    "PARLEY_POSTGRES_NAME": dict(group="scripts", default="`dev`",
        meaning="The name of the throwaway PostgreSQL `scripts/postgres` runs (tests give each their own)."),
    "PARLEY_POSTGRES_PORT": dict(group="scripts", default="a free port",
        meaning="The port of that PostgreSQL."),
    "PARLEY_CRASH_ITERATIONS": dict(group="scripts", default="100",
        meaning="`kill -9` restarts in `scripts/reliability crash`."),
    "PARLEY_SOAK_SESSIONS": dict(group="scripts", default="100",
        meaning="Concurrent sessions of `scripts/reliability soak`."),
    "PARLEY_SOAK_SECONDS": dict(group="scripts", default="900",
        meaning="How long `scripts/reliability soak` runs."),
    "PARLEY_TEST_TIME_SCALE": dict(group="scripts", default="1 (8 on sanitized builds)",
        meaning="How many times longer tests wait for their deadlines (`TestDeadline`)."),
}

# Settings that are not environment variables but still worth a line: none yet.

STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
NAME = re.compile(r"\b((?:PARLEY|OTEL)_[A-Z0-9_]*[A-Z0-9])\b")


def swift_variables():
    """Every PARLEY_*/OTEL_* name in a string literal of a Swift file under Sources/."""
    found = {}
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(ROOT).as_posix()
        for literal in STRING_LITERAL.findall(text):
            for name in NAME.findall(literal):
                found.setdefault(name, relative)
        # ServerSettings.load builds PARLEY_<KIND>[_SUFFIX] for each provider("KIND", …) call.
        kinds = re.findall(r'\bprovider\("([A-Z]+)"', text)
        suffixes = set(re.findall(r'PARLEY_\\\(kind\)((?:_[A-Z]+)*)', text))
        for kind in kinds:
            for suffix in suffixes:
                found.setdefault(f"PARLEY_{kind}{suffix}", relative)
    return found


def script_variables():
    """Every `${PARLEY_*:-default}` a script under scripts/ lets its caller set."""
    found = {}
    for path in sorted((ROOT / "scripts").iterdir()):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for name in re.findall(r"\$\{(PARLEY_[A-Z0-9_]+):-", text):
            found.setdefault(name, path.relative_to(ROOT).as_posix())
    return found


def serve_options():
    """(flag, value name, help) of every `parley serve` option, from its CommandSpec."""
    text = (ROOT / SERVE_SPEC).read_text(encoding="utf-8")
    spec = text.split("options: [", 1)[1].split("],", 1)[0]
    options = []
    pattern = re.compile(r'\.(option|flag)\("([a-z0-9-]+)"(?:, short: "[^"]*")?(?:, value: "([^"]+)")?(?:, required: \w+)?, help: ((?:"(?:[^"\\]|\\.)*"\s*(?:\+\s*)?)+)\)')
    for kind, name, value, help_parts in pattern.findall(spec):
        help_text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', help_parts))
        options.append((name, value, help_text))
    if not options:
        sys.exit(f"config-reference: no options found in {SERVE_SPEC}; has its CommandSpec changed shape?")
    return options


def property_default(type_name, prop):
    """The initial value of `var prop = …` in the declaration of `type_name`, in words."""
    for path in (ROOT / "Sources").rglob("*.swift"):
        text = path.read_text(encoding="utf-8")
        if not re.search(rf"\b(struct|class|enum) {type_name}\b", text):
            continue
        match = re.search(rf"\bvar {prop}(?:: [^=\n]+)? = ([^\n]+)", text)
        if not match:
            continue
        raw = match.group(1).strip()
        if raw.startswith('"') and raw.endswith('"'):
            return f"`{raw[1:-1]}`"
        if raw in ("true", "false"):
            return "on" if raw == "true" else "off"
        seconds = re.fullmatch(r"\.seconds\((\d[\d_]*)\)", raw)
        if seconds:
            value = int(seconds.group(1).replace("_", ""))
            return f"{value * 1000}" if type_name == "OTLPConfiguration" else f"{value}"
        number = re.fullmatch(r"\d[\d_]*", raw)
        if number:
            return raw.replace("_", ",") if len(raw.replace("_", "")) > 4 else raw.replace("_", "")
        if raw.startswith("."):
            return f"`{raw[1:]}`"
        sys.exit(f"config-reference: cannot read the default of {type_name}.{prop} from '{raw}'")
    sys.exit(f"config-reference: no `var {prop} = …` in {type_name}")


def cell(text):
    return text.replace("|", "\\|")


def render(variables_in_code, options):
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated by scripts/config-reference from the code; edit the descriptions there, not here. -->",
        "",
        "`parley serve` reads its flags, the environment and a `.env` file (`--env-file`, default",
        "`./.env` when present). Flags override the environment, which overrides `.env`. Every problem",
        "is reported on its own line at start, and the server does not start until all are fixed.",
        "Switches (`on`/`off`) also take `true`/`false`, `yes`/`no` and `1`/`0`.",
        "",
        "This page is generated from the code by `scripts/config-reference`, and `scripts/test` fails",
        "when a setting in the code is missing here, so it lists every setting there is.",
        "",
        "## `parley serve` flags",
        "",
        "| flag | same as | meaning |",
        "|---|---|---|",
    ]
    by_flag = {spec["flag"]: name for name, spec in VARIABLES.items() if "flag" in spec}
    for name, value, help_text in options:
        flag = f"--{name}"
        same = f"`{by_flag[flag]}`" if flag in by_flag else ""
        shown = f"`{flag} {value.upper()}`" if value else f"`{flag}`"
        lines.append(f"| {shown} | {same} | {cell(help_text)} |")
    lines += ["", "`parley help serve` prints the same, and `parley help` lists the other commands.", ""]
    lines += ["## Environment variables", ""]
    for group, title, guide in GROUPS:
        names = [n for n, spec in VARIABLES.items() if spec["group"] == group]
        if not names:
            continue
        lines += [f"### {title}", ""]
        if group == "scripts":
            lines += ["Read by the scripts under `scripts/` and by the tests, not by `parley` itself.", ""]
        if guide:
            lines += [f"How to use them: [{guide_title(guide)}]({guide}).", ""]
        lines += ["| variable | default | meaning |", "|---|---|---|"]
        for name in names:
            spec = VARIABLES[name]
            default = spec.get("default") or property_default(spec.get("type", "ServerSettings"), spec["prop"])
            flag = f" (`{spec['flag']}`)" if "flag" in spec else ""
            lines.append(f"| `{name}`{flag} | {cell(default)} | {cell(spec['meaning'])} |")
        lines.append("")
    return "\n".join(lines)


def guide_title(guide):
    page = guide.split("#", 1)[0]
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return text.split("\n", 1)[0].lstrip("# ").strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if docs/configuration.md is out of date")
    args = parser.parse_args()

    in_code = {**script_variables(), **swift_variables()}
    undocumented = sorted(set(in_code) - set(VARIABLES))
    stale = sorted(set(VARIABLES) - set(in_code))
    options = serve_options()
    flags_described = {spec["flag"] for spec in VARIABLES.values() if "flag" in spec}
    unknown_flags = sorted(flags_described - {f"--{name}" for name, _, _ in options})
    problems = [f"{name} (in {in_code[name]}) has no description in scripts/config-reference.py" for name in undocumented]
    problems += [f"{name} is described in scripts/config-reference.py but no longer in the code" for name in stale]
    problems += [f"{flag} is named in scripts/config-reference.py but parley serve has no such flag" for flag in unknown_flags]
    if problems:
        for problem in problems:
            print(f"config-reference: {problem}", file=sys.stderr)
        sys.exit(1)

    text = render(in_code, options)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print("config-reference: docs/configuration.md is out of date; run scripts/config-reference", file=sys.stderr)
            sys.exit(1)
        print(f"config-reference: docs/configuration.md is up to date ({len(VARIABLES)} variables, {len(options)} flags)")
    else:
        OUTPUT.write_text(text, encoding="utf-8")
        print(f"config-reference: wrote docs/configuration.md ({len(VARIABLES)} variables, {len(options)} flags)")


if __name__ == "__main__":
    main()
