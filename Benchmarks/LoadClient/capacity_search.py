"""The one rule every capacity figure of the benchmarks is found by (the Swift benchmarks follow
the same rule, `Benchmarks/Harness/CapacitySearch.swift`):

1. Grow through `ladder`, then double the last count, never past `ceiling`, until a count fails.
2. Confirm every failure: a count that fails is run once more and fails only if it fails again.
   One run can fail for a reason that is not the load (a stretch where the host ran the CPUs
   slower, a turn that paid for something started lazily); failing twice in a row at the same
   count is the load. A count that holds once holds.
3. When the first count fails, halve it until a count holds; the bracket says the first count
   failed, and when even 1 failed, that no count held -- never that the first count is the limit.
4. Bisect between the largest count that held and the smallest that failed until they are
   within `precision` of each other (or next to each other).

Warming up is the trial's part: each trial brings its system up the same way before it measures.
"""


def growth_steps(ladder, ceiling):
    """The counts of the growing phase: the ladder's (below the ceiling), then doubling to it."""
    steps = [n for n in ladder if 1 <= n < ceiling]
    following = steps[-1] * 2 if steps else ceiling
    while following < ceiling:
        steps.append(following)
        following *= 2
    return steps + [ceiling]


def is_close(held, failed, precision):
    """Whether a bracket from `held` to `failed` is narrow enough to stop."""
    return failed - held <= 1 or failed <= held * (1 + precision)


def search(trial, holds, ladder, ceiling, precision=0.1):
    """Runs the search: `trial(count)` runs the system at a count and returns its figures,
    `holds(figures)` says whether they held. Returns a dict: `runs` (every trial in order, each
    {"count", "held", "figures"}), `held` and `failed` (the run at the largest count that held,
    the second run at the smallest that failed; None when there is none), `first_count_failed`."""
    bracket = {"runs": [], "held": None, "failed": None, "first_count_failed": False, "precision": precision}

    def verdict(count):
        for _ in range(2):
            figures = trial(count)
            run = {"count": count, "held": bool(holds(figures)), "figures": figures}
            bracket["runs"].append(run)
            if run["held"]:
                break
        return run

    def record(run):
        bracket["held" if run["held"] else "failed"] = run

    for count in growth_steps(ladder, ceiling):
        run = verdict(count)
        record(run)
        if not run["held"]:
            break
    if bracket["failed"] is None:
        return bracket
    if bracket["held"] is None:
        bracket["first_count_failed"] = True
        count = bracket["failed"]["count"] // 2
        while count >= 1 and bracket["held"] is None:
            record(verdict(count))
            count //= 2
    while bracket["held"] and not is_close(bracket["held"]["count"], bracket["failed"]["count"], precision):
        record(verdict((bracket["held"]["count"] + bracket["failed"]["count"]) // 2))
    return bracket


def summary(bracket):
    """The bracket in words: "largest held 136, smallest failed 140", with what is missing said
    as such ("no count held", "no count failed up to the ceiling")."""
    held = f"largest held {bracket['held']['count']}" if bracket["held"] else "no count held"
    return f"{held}, {failed_summary(bracket)}"


def failed_summary(bracket):
    """The bracket's upper end in words: "smallest failed 140", "smallest failed 6 (the first count
    tried, 20, failed)" or "no count failed up to the ceiling"."""
    if not bracket["failed"]:
        return "no count failed up to the ceiling"
    first = f" (the first count tried, {bracket['runs'][0]['count']}, failed)" if bracket["first_count_failed"] else ""
    return f"smallest failed {bracket['failed']['count']}{first}"
