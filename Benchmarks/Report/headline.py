"""The headline at the top of BENCHMARKS.md: at most ten figures of what a user gets (the
defaults, the embedded stack or a realistic upstream, a continuing conversation, timed as the
client hears it), each with its target and verdict, misses included. Each figure is taken from
this run or from the section a run kept from earlier, and says the commit it was measured at;
a figure no run has measured yet says so rather than leaving its row out."""

import re

# (what the row says to a reader, the area, a pattern the figure's full name matches).
HEADLINE = [
    ("Voice to voice with `server_vad`, p50 (embedded stack, defaults, ten different spoken questions in one conversation)",
     "conversation", r"^conversation: last voiced sample .*\(defaults\), p50$"),
    ("Voice to voice with `server_vad`, p90 (the same conversation)",
     "conversation", r"^conversation: last voiced sample .*\(defaults\), p90$"),
    ("Voice to voice with `semantic_vad` auto, p50 (the same conversation)",
     "conversation", r"^conversation: last voiced sample .*semantic_vad \(eagerness auto\).*, p50$"),
    ("Voice to voice with `semantic_vad` auto, p90 (the same conversation)",
     "conversation", r"^conversation: last voiced sample .*semantic_vad \(eagerness auto\).*, p90$"),
    ("A plain Realtime client stops hearing the agent after a real interruption begins, p50 (defaults)",
     "interruption-plain-client", r"^plain client .*, defaults \(speech paced.*\), p50$"),
    ("Sessions one server holds on 2 cores (defaults, hosted-stack upstream at GPT-4.1 mini's published rates, "
     "p99 ≤ the upstream's own path to first audio + the 300 ms silence window + 500 ms)",
     "server", r"^defaults \(Silero VAD.*hosted-stack upstream.*\): concurrent sessions .*path to first audio"),
    ("A phone call's voice to voice, p50 (Twilio Media Streams, embedded stack, ten different spoken questions in one call)",
     "telephony", r"^Twilio call voice-to-voice, embedded stack: .*\(p50\)$"),
    ("Phone calls one server holds on 2 cores (defaults, the same upstream and p99 bound)",
     "telephony", r"^Twilio concurrent calls, defaults .*hosted-stack upstream.*path to first audio"),
    ("WebRTC calls one server holds on 2 cores (defaults, the same upstream and p99 bound)",
     "webrtc", r"^concurrent calls, defaults .*hosted-stack upstream.*path to first audio"),
    ("Sessions two cluster nodes on one PostgreSQL hold on the same 2 cores (defaults, the same upstream and p99 bound; "
     "one node's figure is in its section)",
     "cluster-capacity", r"^2 nodes on one PostgreSQL, defaults profile: concurrent sessions .*path to first audio"),
]

_ROW = re.compile(r"^\| (?P<name>.+?) \| (?P<value>[^|]*) \| (?P<target>[^|]*) \| (?P<verdict>[^|]*) \|$")


def rows_of(body):
    """The figure rows of a kept section's tables: {name: (value text, target, verdict cell)}."""
    rows = {}
    for line in body:
        row = _ROW.match(line)
        if row and row["name"] not in ("figure", "---"):
            rows[row["name"]] = (row["value"].strip(), row["target"].strip(), row["verdict"].strip())
    return rows


def headline_lines(figures, kept_sections, this_commit, kept_commits, value_cell, verdict_cell, load_averages=None):
    """The headline table. `figures`: this run's and the kept runs' figures (dicts with area,
    name, value, unit, target, verdict); `kept_sections`: the sections kept from the earlier
    BENCHMARKS.md, by area; `kept_commits`: the commit each kept run's area came from;
    `load_averages`: the load average each commit's run began with, where known."""
    load_averages = dict(load_averages or {})
    for section in kept_sections.values():
        if section["info"].get("load_average"):
            load_averages.setdefault(section["info"]["commit"], section["info"]["load_average"])
    shown = []
    lines = [
        "## Headline: what a user gets",
        "",
        "| what | value | target | result | measured at |",
        "|---|---:|---|---|---|",
    ]
    for label, area, pattern in HEADLINE:
        matcher = re.compile(pattern)
        figure = next((f for f in figures if f["area"] == area and matcher.search(f["name"].strip())), None)
        if figure:
            commit = kept_commits.get(area, this_commit)
            lines.append(f"| {label} | {value_cell(figure)} | {figure['target']} | {verdict_cell(figure['verdict'])} | `{commit}` |")
            shown.append(commit)
            continue
        section = kept_sections.get(area)
        row = next((r for name, r in rows_of(section["body"]).items() if matcher.search(name.strip())), None) if section else None
        if row:
            lines.append(f"| {label} | {row[0]} | {row[1]} | {row[2]} | `{section['info']['commit']}` |")
            shown.append(section["info"]["commit"])
        else:
            lines.append(f"| {label} | not measured yet | | | |")
    loads = [f"`{commit}` {load_averages[commit]}" for commit in dict.fromkeys(shown) if commit in load_averages]
    lines += [""]
    if loads:
        lines += ["Load average when each run began (a busy machine makes figures pessimistic; each section says what "
                  "else ran): " + "; ".join(loads) + ".", ""]
    lines += [
        "Everything below the headline is labelled with what it measures; micro-benchmarks, pipeline overheads "
        "(instant providers) and best cases are not what a user gets and say so.",
        "",
    ]
    return lines
