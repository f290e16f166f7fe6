import Foundation
import Testing
@testable import ParleyCLI

/// The exact `--help` text of every command: help is part of the interface.
@Suite("Help text")
struct HelpTextTests {
    @Test("--help, -h and 'parley help' print the same text for every command", arguments: HelpTextTests.expected.keys.sorted())
    func helpText(command: String) async {
        let path = command.split(separator: " ").map(String.init)
        let expected = HelpTextTests.expected[command] ?? ""
        for arguments in [path + ["--help"], path + ["-h"], ["help"] + path] {
            let run = await CommandRun.run(arguments)
            #expect(run.status == 0, "\(arguments)")
            #expect(run.output == expected, "\(arguments)")
            #expect(run.errorOutput.isEmpty, "\(arguments)")
        }
    }

    @Test("no help line is wider than 80 columns")
    func width() {
        for (command, text) in HelpTextTests.expected {
            for line in text.split(separator: "\n") where line.count > 80 && !line.hasPrefix("  parley ") {
                Issue.record("\(command): \(line)")
            }
        }
    }

    @Test("--version")
    func version() async {
        let run = await CommandRun.run(["--version"])
        #expect(run.status == 0)
        #expect(run.output == "parley \(ParleyCommandLine.version)\n")
    }

    static let expected: [String: String] = [
        "": #"""
Parley — a self-hostable, voice-first AI agent.

Usage: parley <command>

Commands:
  serve          Run the Parley server: realtime voice endpoint, REST API and
                 web client.
  chat           Chat with an agent in the terminal.
  talk           One voice turn from a WAV file: print what was heard and the
                 reply, and speak the reply.
  transcribe     Print the transcript of each WAV file.
  say            Speak text to a WAV file.
  eval           Call an agent with simulated callers from scenario files and
                 check its replies.
  token          Mint a client token from the server secret.
  console-token  Mint a token for the operator console (/console).
  agents         Manage the agents of a running server.
  twilio         Print the Twilio webhook URL and check the phone-call setup.
  sip            Check the SIP door's setup and print the URI trunks call.
  help           Show the help of a command.

Options:
  -h, --help     Show this help.
      --version  Show the version.

See 'parley help <command>' for a command's options.

"""#,
        "serve": #"""
Run the Parley server: realtime voice endpoint, REST API and web client.

With nothing configured it runs the embedded offline stack (whisper.cpp, the
Piper voice, llama.cpp) and, when no server secret is set, generates one into
the data directory. Settings come from the environment and a .env file; the
flags below override them.

Usage: parley serve [--host <address>] [--port <port>] [--data-dir <path>]
       [--env-file <path>] [--web-root <path>] [--llm-model <path>]
       [--asr-model <name>] [--database-url <url>] [--tls-cert <path>]
       [--tls-key <path>]

Options:
      --host <address>      The address to listen on (default 127.0.0.1).
      --port <port>         The port to listen on (default 8080; 0 picks a free
                            one).
      --data-dir <path>     Where the database and a generated secret are kept
                            (default ./.parley).
      --env-file <path>     A .env file with PARLEY_* settings (default ./.env
                            when present).
      --web-root <path>     The folder of the web client served at / (default
                            ./Web).
      --llm-model <path>    A GGUF model of your own for the embedded
                            llama-server, instead of SmolLM2.
      --asr-model <name>    The embedded Whisper model: tiny.en (the default,
                            English only) or base (multilingual).
      --database-url <url>  A postgresql:// URL: keep the store in PostgreSQL
                            instead of SQLite (cluster mode).
      --tls-cert <path>     A PEM certificate (chain): serve HTTPS and WSS with
                            it, no proxy needed. Needs --tls-key.
      --tls-key <path>      The PEM private key of --tls-cert.
  -h, --help                Show this help.

Environment:
  PARLEY_SERVER_SECRET      Signs client tokens and authorises the REST API.
  PARLEY_DATABASE_URL       A postgresql:// URL, as --database-url.
  PARLEY_SYSTEM_PROMPT      The default agent's instructions.
  PARLEY_TLS_CERT           A PEM certificate, as --tls-cert.
  PARLEY_TLS_KEY            A PEM private key, as --tls-key.
  PARLEY_LLM_URL            An OpenAI-compatible chat API instead of the
                            embedded model.
  PARLEY_LLM_MODEL_PATH     A GGUF model for the embedded llama-server when
                            --llm-model is not given.
  PARLEY_ASR_URL            An OpenAI-compatible transcription API instead of
                            whisper.cpp.
  PARLEY_ASR_MODEL          The Whisper model when --asr-model is not given;
                            with PARLEY_ASR_URL, the service's model.
  PARLEY_TTS                The embedded voice: piper (the default neural voice)
                            or flite.
  PARLEY_TTS_URL            An OpenAI-compatible speech API instead of the
                            embedded voice.
  PARLEY_MAX_OUTPUT_TOKENS  The longest reply in tokens (default 150 with the
                            embedded model, none with PARLEY_LLM_URL).

Examples:
  parley serve
  parley serve --host 0.0.0.0 --port 9000 --data-dir /var/lib/parley
  parley serve --llm-model ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf
  parley serve --asr-model base

"""#,
        "chat": #"""
Chat with an agent in the terminal.

Replies stream as they are written and tool calls show as they run. Type /reset
to start over and /exit (or end the input) to leave. In process by default, with
the embedded language model or the one PARLEY_LLM_URL names; with --url, through
a running server over the OpenAI Realtime protocol.

Usage: parley chat [--url <url>] [--agent <id>] [--instructions <text>]

Options:
      --url <url>            A running Parley server, e.g.
                             http://127.0.0.1:8080.
      --agent <id>           The server's agent to chat with (with --url;
                             default: the server's own).
      --instructions <text>  The system prompt of an in-process chat.
  -h, --help                 Show this help.

Environment:
  PARLEY_SERVER_SECRET       Credentials for --url (else the secret in
                             ./.parley).
  PARLEY_LLM_URL             An OpenAI-compatible chat API instead of the
                             embedded model.
  PARLEY_LLM_MODEL           The model name for that API.
  PARLEY_LLM_API_KEY         The API key for that API.
  PARLEY_SYSTEM_PROMPT       The default system prompt.

Examples:
  parley chat
  parley chat --url http://127.0.0.1:8080 --agent agent_123

"""#,
        "talk": #"""
One voice turn from a WAV file: print what was heard and the reply, and speak
the reply.

In process by default, with the same engines and PARLEY_* settings as 'parley
serve'. With --url the turn goes to a running server over the OpenAI Realtime
protocol.

Usage: parley talk <file> [--out <file>] [--url <url>] [--agent <id>]

Arguments:
  <file>                A WAV file with what the user says (any rate, mono or
                        stereo).

Options:
  -o, --out <file>      Write the spoken reply to this WAV file (24 kHz mono).
      --url <url>       A running Parley server, e.g. http://127.0.0.1:8080.
      --agent <id>      The server's agent to talk to (with --url; default: the
                        server's own).
  -h, --help            Show this help.

Environment:
  PARLEY_SERVER_SECRET  Credentials for --url (else the secret in ./.parley).
  PARLEY_LLM_URL        An OpenAI-compatible chat API instead of the embedded
                        model.
  PARLEY_SYSTEM_PROMPT  The agent's instructions in process.

Examples:
  parley talk question.wav --out reply.wav
  parley talk question.wav --url http://127.0.0.1:8080 --agent agent_123

"""#,
        "eval": #"""
Call an agent with simulated callers from scenario files and check its replies.

Each scenario is a conversation over the OpenAI Realtime protocol: typed turns,
turns spoken by an embedded voice or taken from WAV files, key presses,
interruptions, and what each reply should show (docs/evals.md). In process by
default, with the same engines and PARLEY_* settings as 'parley serve'; with
--url on a running server. The exit code is 0 only when every run passed (or
--min-pass-rate was reached).

Usage: parley eval <scenario>... [--url <url>] [--agent <id>] [--repeat <count>]
       [--min-pass-rate <n>] [--junit <file>] [--json <file>]
       [--judge-model <name>]

Arguments:
  <scenario>                A scenario file (JSON).

Options:
      --url <url>           A running Parley server, e.g. http://127.0.0.1:8080.
      --agent <id>          The agent to call instead of the scenarios' own
                            (with --url).
  -n, --repeat <count>      Run each scenario this many times and report pass
                            rates (default 1).
      --min-pass-rate <n>   Succeed when at least n % of the runs passed
                            (default 100).
      --junit <file>        Write a JUnit XML report to this file.
      --json <file>         Write a JSON report with each turn's transcript and
                            timings.
      --judge-model <name>  The model that scores rubrics (default:
                            PARLEY_LLM_MODEL).
  -h, --help                Show this help.

Environment:
  PARLEY_SERVER_SECRET      Credentials for --url (else the secret in
                            ./.parley).
  PARLEY_LLM_URL            The OpenAI-compatible chat API a judge scores with.
  PARLEY_TTS                The caller's voice when a turn names none (piper or
                            flite).

Examples:
  parley eval Examples/evals/built-in-tools.json --url http://127.0.0.1:8080
  parley eval checkout.json --repeat 5 --junit eval.xml --json eval.json

"""#,
        "transcribe": #"""
Print the transcript of each WAV file.

Uses whisper.cpp in process, or the OpenAI-compatible transcription service
PARLEY_ASR_URL names. Any sample rate and channel count is accepted. With
several files, each line starts with the file's name.

Usage: parley transcribe <file>... [--json] [--language <code>]
       [--prompt <text>]

Arguments:
  <file>                 A WAV file to transcribe.

Options:
      --json             Print one JSON object per file, with the text, language
                         and timings.
      --language <code>  The spoken language (ISO-639-1, e.g. de); by default a
                         multilingual model detects it.
      --prompt <text>    Text in the expected style and vocabulary, e.g. names
                         to spell right.
  -h, --help             Show this help.

Environment:
  PARLEY_ASR_URL         An OpenAI-compatible transcription API to use instead
                         of whisper.cpp.
  PARLEY_ASR_MODEL       The Whisper model: tiny.en (default) or base.
  PARLEY_MODEL_DIR       Where the embedded models are (default
                         ~/.cache/parley/models).

Examples:
  parley transcribe question.wav
  parley transcribe *.wav --json
  PARLEY_ASR_MODEL=base parley transcribe frage.wav --language de

"""#,
        "say": #"""
Speak text to a WAV file.

Uses the Piper voice in process (flite with PARLEY_TTS=flite), or the
OpenAI-compatible speech service PARLEY_TTS_URL names.

Usage: parley say [<text>...] --output <file> [--voice <name>] [--speed <rate>]

Arguments:
  <text>               The text to speak; read from standard input when omitted.

Options:
  -o, --output <file>  The WAV file to write.
      --voice <name>   The voice to speak with (default: the synthesizer's own).
      --speed <rate>   Speaking rate: 1 is normal, from 0.25 to 4.
  -h, --help           Show this help.

Environment:
  PARLEY_TTS_URL       An OpenAI-compatible speech API to use instead of the
                       embedded voice.
  PARLEY_TTS_VOICE     The default voice for that API.

Examples:
  parley say "Hello there." -o hello.wav
  echo "Hello there." | parley say -o hello.wav

"""#,
        "sip": #"""
Check the SIP door's setup and print the URI trunks call.

Checks that PARLEY_SIP_PORT opens the SIP door, that trunks may call it
(PARLEY_SIP_TRUNKS, or PARLEY_SIP_USERNAME and PARLEY_SIP_PASSWORD for digest
authentication) and which agent answers each phone number. Exits 1 when a check
fails.

Usage: parley sip [--url <url>]

Options:
      --url <url>       The server (default $PARLEY_URL, else
                        http://127.0.0.1:8080).
  -h, --help            Show this help.

Environment:
  PARLEY_SIP_PORT       The SIP port, UDP and TCP.
  PARLEY_SIP_TRUNKS     Addresses or CIDR blocks of trunks taken without a
                        challenge.
  PARLEY_SIP_USERNAME   The digest username of trunks calling from elsewhere.
  PARLEY_SIP_PASSWORD   Its password.
  PARLEY_SERVER_SECRET  The server secret (else the secret in ./.parley).
  PARLEY_URL            The server when --url is not given.

Examples:
  parley sip
  PARLEY_SIP_PORT=5060 PARLEY_SIP_TRUNKS=192.0.2.20 parley sip

"""#,
        "twilio": #"""
Print the Twilio webhook URL and check the phone-call setup.

Checks that PARLEY_PUBLIC_URL reaches the running server, that
PARLEY_TWILIO_AUTH_TOKEN is set (so every call's X-Twilio-Signature is verified)
and which agent answers each phone number. Exits 1 when a check fails.

Usage: parley twilio [--agent <id>] [--public-url <url>] [--url <url>]

Options:
      --agent <id>          Print the webhook URL for this agent (?agent=ID)
                            instead of choosing by number.
      --public-url <url>    The https URL Twilio reaches the server at (default
                            $PARLEY_PUBLIC_URL).
      --url <url>           The server (default $PARLEY_URL, else
                            http://127.0.0.1:8080).
  -h, --help                Show this help.

Environment:
  PARLEY_PUBLIC_URL         The https URL Twilio reaches the server at (a tunnel
                            or reverse proxy).
  PARLEY_TWILIO_AUTH_TOKEN  The Twilio account's auth token, which signs every
                            webhook.
  PARLEY_SERVER_SECRET      The server secret (else the secret in ./.parley).
  PARLEY_URL                The server when --url is not given.

Examples:
  parley twilio
  parley twilio --agent agent_123 --public-url https://voice.example.com

"""#,
        "token": #"""
Mint a client token from the server secret.

The token is an HS256 JWT that lets one user open realtime sessions without the
server secret. It is signed locally, so no server needs to be running.

Usage: parley token --user <id> [--agent <id>] [--ttl <duration>]
       [--data-dir <path>] [--json]

Options:
      --user <id>        The user the token is for (its subject).
      --agent <id>       Limit the token to this agent.
      --ttl <duration>   How long the token lives, e.g. 90s, 10m, 2h (default
                         10m, at most 24h).
      --data-dir <path>  Where 'parley serve' keeps its generated secret
                         (default ./.parley).
      --json             Print the token, its expiry and scope as JSON.
  -h, --help             Show this help.

Environment:
  PARLEY_SERVER_SECRET   The server secret that signs the token.
  PARLEY_DATA_DIR        The data directory when --data-dir is not given.

Examples:
  parley token --user alice
  parley token --user alice --agent agent_123 --ttl 2h --json

"""#,
        "agents": #"""
Manage the agents of a running server.

Talks to the server's REST API with the server secret from PARLEY_SERVER_SECRET
(else the secret 'parley serve' generated in ./.parley).

Usage: parley agents <command>

Commands:
  list        List the server's agents.
  show        Print one agent as JSON.
  create      Create an agent from a JSON file and/or options; prints the new
              agent as JSON.
  update      Change an agent's fields from a JSON file and/or options; prints
              the agent as JSON.
  delete      Delete an agent.

Options:
  -h, --help  Show this help.

See 'parley help agents <command>' for a command's options.

"""#,
        "agents list": #"""
List the server's agents.

Usage: parley agents list [--url <url>] [--json]

Options:
      --url <url>       The server (default $PARLEY_URL, else
                        http://127.0.0.1:8080).
      --json            Print the server's JSON answer.
  -h, --help            Show this help.

Environment:
  PARLEY_SERVER_SECRET  The server secret (else the secret in ./.parley).
  PARLEY_URL            The server when --url is not given.

Examples:
  parley agents list
  parley agents list --url https://voice.example.com --json

"""#,
        "agents show": #"""
Print one agent as JSON.

Usage: parley agents show <id> [--url <url>]

Arguments:
  <id>                  The agent's id.

Options:
      --url <url>       The server (default $PARLEY_URL, else
                        http://127.0.0.1:8080).
  -h, --help            Show this help.

Environment:
  PARLEY_SERVER_SECRET  The server secret (else the secret in ./.parley).
  PARLEY_URL            The server when --url is not given.

"""#,
        "agents create": #"""
Create an agent from a JSON file and/or options; prints the new agent as JSON.

Usage: parley agents create [<file>] [--name <name>] [--instructions <text>]
       [--voice <name>] [--tools <names>] [--manual-turns] [--url <url>]

Arguments:
  <file>                     A JSON file with the agent's fields ('-' reads
                             standard input).

Options:
      --name <name>          The agent's name.
      --instructions <text>  The agent's instructions (its system prompt).
      --voice <name>         The voice the agent speaks with.
      --tools <names>        Built-in tools it may use, comma-separated:
                             calculate, get_current_time.
      --manual-turns         Push-to-talk: turns end when the client commits,
                             not on silence.
      --url <url>            The server (default $PARLEY_URL, else
                             http://127.0.0.1:8080).
  -h, --help                 Show this help.

Environment:
  PARLEY_SERVER_SECRET       The server secret (else the secret in ./.parley).
  PARLEY_URL                 The server when --url is not given.

Examples:
  parley agents create --name Helper --instructions "Be brief." --tools calculate
  parley agents create agent.json --voice slt

"""#,
        "agents update": #"""
Change an agent's fields from a JSON file and/or options; prints the agent as
JSON.

Usage: parley agents update <id> [<file>] [--name <name>]
       [--instructions <text>] [--voice <name>] [--tools <names>]
       [--manual-turns] [--url <url>]

Arguments:
  <id>                       The agent's id.
  <file>                     A JSON file with the fields to change ('-' reads
                             standard input).

Options:
      --name <name>          The agent's name.
      --instructions <text>  The agent's instructions (its system prompt).
      --voice <name>         The voice the agent speaks with.
      --tools <names>        Built-in tools it may use, comma-separated:
                             calculate, get_current_time.
      --manual-turns         Push-to-talk: turns end when the client commits,
                             not on silence.
      --url <url>            The server (default $PARLEY_URL, else
                             http://127.0.0.1:8080).
  -h, --help                 Show this help.

Environment:
  PARLEY_SERVER_SECRET       The server secret (else the secret in ./.parley).
  PARLEY_URL                 The server when --url is not given.

Examples:
  parley agents update agent_123 --instructions "Answer in French."

"""#,
        "agents delete": #"""
Delete an agent.

Usage: parley agents delete <id> [--url <url>]

Arguments:
  <id>                  The agent's id.

Options:
      --url <url>       The server (default $PARLEY_URL, else
                        http://127.0.0.1:8080).
  -h, --help            Show this help.

Environment:
  PARLEY_SERVER_SECRET  The server secret (else the secret in ./.parley).
  PARLEY_URL            The server when --url is not given.

"""#,
        "help": #"""
Show the help of a command.

Usage: parley help [<command>...]

Arguments:
  <command>   The command, e.g. 'say' or 'agents create'.

Options:
  -h, --help  Show this help.

Examples:
  parley help talk
  parley help agents create

"""#,
    ]
}
