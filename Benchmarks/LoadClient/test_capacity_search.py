"""The capacity search's rule on a fake system whose limit is known (run by scripts/test)."""

import unittest

import capacity_search


class FakeLoadedSystem:
    """Holds up to `limit` sessions, and fails the runs listed in `noisy_runs` (by their place in
    the order run) whatever their count: the host's slow stretch, a lazy start."""

    def __init__(self, limit, noisy_runs=()):
        self.limit = limit
        self.noisy_runs = set(noisy_runs)
        self.runs = 0

    def trial(self, sessions):
        held = sessions <= self.limit and self.runs not in self.noisy_runs
        self.runs += 1
        return {"sessions": sessions, "held": held}


def search(system, ladder, ceiling):
    return capacity_search.search(system.trial, lambda figures: figures["held"], ladder, ceiling)


class CapacitySearchTests(unittest.TestCase):
    def test_grows_through_the_ladder_then_doubles_up_to_the_ceiling(self):
        self.assertEqual(capacity_search.growth_steps([1, 10, 50, 100], 1600), [1, 10, 50, 100, 200, 400, 800, 1600])
        self.assertEqual(capacity_search.growth_steps([1, 10, 50, 100], 300), [1, 10, 50, 100, 200, 300])
        self.assertEqual(capacity_search.growth_steps([20], 16), [16])

    def test_brackets_a_known_limit_within_ten_percent_though_one_run_below_it_failed(self):
        # The fourth run (100 sessions, below the limit) fails once; the search runs it again.
        bracket = search(FakeLoadedSystem(137, noisy_runs=[3]), [1, 10, 50, 100], 1600)
        held, failed = bracket["held"]["count"], bracket["failed"]["count"]
        self.assertTrue(held <= 137 < failed, capacity_search.summary(bracket))
        self.assertLessEqual(failed, held * 1.1)
        self.assertEqual([run["held"] for run in bracket["runs"] if run["count"] == 100], [False, True])
        self.assertEqual([run["held"] for run in bracket["runs"] if run["count"] == failed], [False, False])
        self.assertEqual(capacity_search.summary(bracket), "largest held 137, smallest failed 150")

    def test_a_first_count_that_fails_is_reported_as_such_and_the_limit_is_sought_below_it(self):
        bracket = search(FakeLoadedSystem(5), [20], 640)
        self.assertTrue(bracket["first_count_failed"])
        self.assertEqual((bracket["held"]["count"], bracket["failed"]["count"]), (5, 6))
        self.assertEqual(capacity_search.summary(bracket), "largest held 5, smallest failed 6 (the first count tried, 20, failed)")

    def test_when_even_one_fails_no_count_held(self):
        bracket = search(FakeLoadedSystem(0), [1, 10], 100)
        self.assertIsNone(bracket["held"])
        self.assertEqual(len(bracket["runs"]), 2)
        self.assertEqual(capacity_search.summary(bracket), "no count held, smallest failed 1 (the first count tried, 1, failed)")

    def test_a_system_that_holds_every_count_is_reported_at_the_ceiling_not_as_a_limit(self):
        bracket = search(FakeLoadedSystem(10_000), [1, 10, 50, 100], 400)
        self.assertEqual(bracket["held"]["count"], 400)
        self.assertIsNone(bracket["failed"])
        self.assertEqual(capacity_search.summary(bracket), "largest held 400, no count failed up to the ceiling")


if __name__ == "__main__":
    unittest.main()
