"""The report writer's own logic: capacity figures, and what `--keep-earlier` keeps (run by scripts/test)."""

import os
import subprocess
import tempfile
import unittest

import earlier_report
import write_report

EARLIER_REPORT = """# Benchmarks

Written by `scripts/bench` on 2026-12-01 10:00 UTC, commit `{first}`.

**Machine:** 2 cores. Load average when the run began: 0.10 0.20 0.30 (the machine is shared; figures from a busy machine are pessimistic).

Targets met: 2 of 3 in the Parley areas.

## Network layer (libwebsockets HTTP and WebSocket) (`network`)

| figure | value | target | result |
|---|---:|---|---|
| GET req/s, 50 connections, raw lws | 63,133 req/s |  |  |
| GET throughput ParleyNet/raw, 50 connections | 125 % | >= 70% | pass |

## Store engines: SQLite and PostgreSQL (`store`)

*Not rerun by this command: figures from the earlier run of 2026-11-30 09:00 UTC, commit `{first}`, load average 1.00 1.00 1.00 when it began.*

| figure | value | target | result |
|---|---:|---|---|
| SQLite appendItem p50 | 0.2 ms | <= 1 ms | pass |
| PostgreSQL appendItem p50 | 3.0 ms | <= 2 ms | **MISS** |

### Where the time goes

PostgreSQL waits for fsync.

## Areas without figures in this run

- `audio`: not measured.

## Parley vs Pipecat

Same machine, same run.

| target | Parley | Pipecat | ratio | target | result |
|---|---:|---:|---:|---|---|
| memory per session at N = 100 | 0.8 MiB | 15 MiB | 19× | ≥ 10× smaller | pass |

Pipecat: `pipecat-ai==1.14.0` from PyPI.
"""


def git(root, *arguments):
    return subprocess.run(["git", "-C", root, *arguments], capture_output=True, text=True, check=True).stdout.strip()


def commit_file(root, path, text, message):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as handle:
        handle.write(text)
    git(root, "add", path)
    git(root, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", message)
    return git(root, "rev-parse", "--short", "HEAD")


class ValueCellTests(unittest.TestCase):
    def figure(self, value, unit):
        return {"area": "server", "name": "capacity", "value": value, "unit": unit, "target": "", "verdict": "-"}

    def test_a_capacity_figure_says_the_largest_count_held_and_the_smallest_failed(self):
        self.assertEqual(write_report.value_cell(self.figure(136, "sessions held; smallest failed 150")),
                         "largest held 136 sessions, smallest failed 150")
        self.assertEqual(write_report.value_cell(self.figure(400, "calls held; no count failed up to the ceiling")),
                         "largest held 400 calls, no count failed up to the ceiling")

    def test_a_capacity_search_that_held_nothing_says_so(self):
        self.assertEqual(write_report.value_cell(self.figure(0, "sessions held; smallest failed 1 (the first count tried, 1, failed)")),
                         "no count held, smallest failed 1 (the first count tried, 1, failed)")

    def test_other_figures_are_their_value_and_unit(self):
        self.assertEqual(write_report.value_cell(self.figure(17.25, "µs")), "17.2 µs")


def comparison_run(sessions, p99, held):
    """One load run of comparison.json with the fields the report reads."""
    return {
        "sessions": sessions, "connected": sessions, "turns": 4 * sessions, "answered": 4 * sessions, "held": held,
        "first_audio_ms": {"p50": 560.0, "p99": p99}, "endpointing_ms": {"p50": None}, "after_turn_end_ms": {"p50": None},
        "server_cpu_seconds": 1.0, "server_run_queue_wait_seconds": 0.1, "wall_seconds": 20.0, "session_audio_seconds": 20.0 * sessions,
        "server_rss_kb": {"baseline": 1000, "idle_connected": 2000, "peak": 1000 + 1024 * sessions}, "pacing": {"late_ticks": 0, "worst_tick_lag_ms": 0},
    }


def comparison(parley_trials, pipecat_trials, parley_bracket, pipecat_bracket):
    def system(trials, bracket):
        return {
            "runs": {str(n): comparison_run(n, 600.0 if held else 1500.0, held) for n, held in trials},
            "search": {"trials": [{"sessions": n, "held": held} for n, held in trials], "precision": 0.1, "ceiling": 1600, **bracket},
        }
    return {
        "settings": {
            "silence_window_ms": 300, "turn_period_ms": 5000, "vad_threshold": 0.7, "parley_vad": "silero", "floor_ms": 570,
            "p99_limit_ms": 1000, "upstream": {"transcription_ms": 50, "first_token_ms": 100, "tokens_per_second": 100,
                                               "speech_first_byte_ms": 50, "speech_audio_ms": 500},
        },
        "systems": {"parley": system(parley_trials, parley_bracket), "pipecat": system(pipecat_trials, pipecat_bracket)},
    }


class ComparisonSectionTests(unittest.TestCase):
    def test_each_capacity_is_the_largest_count_held_and_the_smallest_failed_with_every_trial(self):
        text = "\n".join(write_report.comparison_section(comparison(
            [(1, True), (10, True), (50, True), (100, True), (200, False), (200, False), (150, True), (175, False), (175, False)],
            [(1, False), (1, True), (10, True), (50, False), (50, False), (30, True), (40, False), (40, False), (35, False), (35, False)],
            {"largest_held": 150, "smallest_failed": 175, "first_count_failed": False, "summary": "largest held 150, smallest failed 175"},
            {"largest_held": 30, "smallest_failed": 35, "first_count_failed": False, "summary": "largest held 30, smallest failed 35"},
        ), cores=2))
        self.assertIn("Pipecat's capacity search, every run in order: 1 failed, 1 held, 10 held, 50 failed, 50 failed, 30 held", text)
        self.assertIn("| concurrent sessions per core (largest count held ÷ cores) | 75.0 (largest held 150, smallest failed 175) | "
                      "15.0 (largest held 30, smallest failed 35) | 5.0× | ≥ 5× | pass |", text)
        self.assertIn("| 200 | 560 / 1,500 — failed |", text)
        self.assertNotIn("sustain", text)

    def test_a_system_that_held_no_count_is_not_given_a_ratio(self):
        text = "\n".join(write_report.comparison_section(comparison(
            [(1, True), (10, True)], [(1, False), (1, False)],
            {"largest_held": 10, "smallest_failed": None, "first_count_failed": False, "summary": "largest held 10, no count failed up to the ceiling"},
            {"largest_held": None, "smallest_failed": 1, "first_count_failed": True,
             "summary": "no count held, smallest failed 1 (the first count tried, 1, failed)"},
        ), cores=2))
        self.assertIn("| – (a system held no count) | ≥ 5× | – |", text)
        self.assertIn("Pipecat failed at the first count tried: no count held, smallest failed 1 (the first count tried, 1, failed).", text)
        self.assertIn("Parley held every count up to the ceiling of this run (1600); its figure is a lower bound.", text)


class KeepEarlierTests(unittest.TestCase):
    """An earlier BENCHMARKS.md at commit `first`; since then one commit changed two files under
    Sources/ParleyNet (the network benchmark's path) and nothing on the store's."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.folder.name, "repo")
        os.makedirs(self.root)
        git(self.root, "init", "-q")
        self.first = commit_file(self.root, "Sources/ParleyNet/Server.swift", "v1\n", "first")
        commit_file(self.root, "Sources/ParleyNet/Server.swift", "v2\n", "network change")
        commit_file(self.root, "Sources/ParleyNet/Client.swift", "v1\n", "network change")
        self.report = os.path.join(self.root, "BENCHMARKS.md")
        with open(self.report, "w") as handle:
            handle.write(EARLIER_REPORT.format(first=self.first))
        self.runs = os.path.join(self.folder.name, "bench")
        self.figures = os.path.join(self.folder.name, "figures.tsv")
        with open(self.figures, "w") as handle:
            handle.write("audio\tEnergyVAD x real time\t34057.000\tx\t>= 2000x\tpass\n")

    def tearDown(self):
        self.folder.cleanup()

    def write(self, earlier_runs):
        os.makedirs(earlier_runs, exist_ok=True)
        write_report.main([
            "--figures", self.figures, "--command", "scripts/bench --only audio --keep-earlier", "--root", self.root,
            "--out", self.report, "--earlier-runs", earlier_runs, "--earlier-report", self.report,
        ])
        with open(self.report) as handle:
            return handle.read()

    def test_areas_not_run_keep_their_sections_when_no_earlier_run_directory_has_them(self):
        text = self.write(self.runs)
        self.assertIn("## Audio and turn-taking core (`audio`)", text)
        self.assertIn("| GET throughput ParleyNet/raw, 50 connections | 125 % | >= 70% | pass |", text)
        self.assertIn("| PostgreSQL appendItem p50 | 3.0 ms | <= 2 ms | **MISS** |", text)
        self.assertIn("PostgreSQL waits for fsync.", text)
        self.assertIn("| memory per session at N = 100 | 0.8 MiB | 15 MiB | 19× | ≥ 10× smaller | pass |", text)
        self.assertIn("Pipecat: `pipecat-ai==1.14.0` from PyPI.", text)
        self.assertNotIn("`network`: not measured", text)
        # The kept verdicts count in the headline.
        self.assertIn("Targets met: 3 of 4 in the Parley areas — missed: store: PostgreSQL appendItem p50.", text)

    def test_each_kept_section_names_its_run_and_what_changed_on_its_path_since(self):
        text = self.write(self.runs)
        network = text[text.index("(`network`)"):text.index("(`store`)")]
        self.assertIn(f"figures from the earlier run of 2026-12-01 10:00 UTC, commit `{self.first}`, load average 0.10 0.20 0.30", network)
        self.assertIn(f"*Since commit `{self.first}`, 2 commits changed 2 files on this benchmark's path (", network)
        store = text[text.index("(`store`)"):text.index("## Parley vs Pipecat")]
        self.assertIn(f"figures from the earlier run of 2026-11-30 09:00 UTC, commit `{self.first}`, load average 1.00 1.00 1.00", store)
        self.assertIn(f"*No file on this benchmark's path changed since `{self.first}`.*", store)
        self.assertEqual(store.count("*Not rerun by this command"), 1)

    def test_keeping_twice_keeps_the_same_sections_with_their_own_runs(self):
        first = self.write(self.runs)
        again = self.write(self.runs)
        strip = lambda text: text.split("\n", 3)[3]  # noqa: E731 — everything after the "Written by" line
        self.assertEqual(strip(first), strip(again))

    def test_a_newer_earlier_run_directory_wins_over_the_earlier_report(self):
        run = os.path.join(self.runs, "run-20261202-080000")
        os.makedirs(run)
        with open(os.path.join(run, "run.json"), "w") as handle:
            handle.write('{"started": "2026-12-02 08:00 UTC", "commit": "%s"}' % self.first)
        with open(os.path.join(run, "figures.tsv"), "w") as handle:
            handle.write("network\tGET throughput ParleyNet/raw, 50 connections\t99.000\t%\t>= 70%\tpass\n")
        text = self.write(self.runs)
        self.assertIn("| GET throughput ParleyNet/raw, 50 connections | 99.0 % | >= 70% | pass |", text)
        self.assertIn("figures from the earlier run of 2026-12-02 08:00 UTC", text)
        self.assertNotIn("63,133 req/s", text)
        # The store section, which that run did not have, still comes from the earlier report.
        self.assertIn("| SQLite appendItem p50 | 0.2 ms | <= 1 ms | pass |", text)

    def test_a_commit_git_does_not_know_is_said_to_be_unknown(self):
        lines = earlier_report.provenance_lines({"started": "2026-12-01 10:00 UTC", "commit": "0000000"}, self.root, "network")
        self.assertIn("*Commit `0000000` is not in this repository's history", "\n".join(lines))


if __name__ == "__main__":
    unittest.main()
