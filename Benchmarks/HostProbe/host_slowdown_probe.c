/*
 * host_slowdown_probe: how much slower this machine's CPUs run from moment to moment.
 *
 * A virtual machine's CPUs can run many times slower for a while when its host is busy, and
 * the guest cannot see it: the time still counts as the running thread's CPU time. Every
 * latency figure measured in such a stretch is the host's, not the program's. This probe
 * times one fixed piece of arithmetic (a dependent chain of multiply-adds, no memory traffic)
 * every <period-us> microseconds, in the thread's own CPU time, so that neither sleeping nor
 * being preempted by other programs counts; only the CPU itself running slower does.
 *
 *   host_slowdown_probe <period-us> <iterations>
 *
 * It runs until its standard input ends, then prints (times in CLOCK_MONOTONIC microseconds):
 *   work_us <median>                    the piece of work's median CPU time
 *   samples <count>                     pieces timed
 *   slow <start_us> <end_us> <ratio>    a stretch where the work took more than 3 times its
 *                                       median (slow samples less than 30 ms apart are one
 *                                       stretch), with the worst ratio seen in it
 *
 * Build: scripts/build-bench-tools
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SLOW_RATIO 3.0
#define JOIN_US 30000

struct sample {
	int64_t at_us;
	int64_t cpu_ns;
};

static int64_t
clock_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int
compare_ns(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* True once standard input has ended (or failed). */
static int
input_ended(void)
{
	struct pollfd input = { .fd = STDIN_FILENO, .events = POLLIN };
	char buffer[256];

	if (poll(&input, 1, 0) <= 0)
		return 0;
	return read(STDIN_FILENO, buffer, sizeof(buffer)) <= 0;
}

int
main(int argc, char **argv)
{
	struct sample *samples = NULL;
	size_t count = 0, capacity = 0;
	volatile double sink = 1.0;
	long period_us, iterations;

	if (argc != 3 || (period_us = atol(argv[1])) <= 0 || (iterations = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: host_slowdown_probe <period-us> <iterations>\n");
		return 2;
	}
	while (!input_ended()) {
		struct timespec pause = { .tv_sec = period_us / 1000000, .tv_nsec = (period_us % 1000000) * 1000 };
		int64_t at_us = clock_ns(CLOCK_MONOTONIC) / 1000;
		int64_t before = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		double value = sink;

		for (long i = 0; i < iterations; i++)
			value = value * 1.0000001 + 0.0000001;
		sink = value;
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 4096;
			samples = realloc(samples, capacity * sizeof(*samples));
			if (!samples) {
				fprintf(stderr, "host_slowdown_probe: out of memory\n");
				return 1;
			}
		}
		samples[count].at_us = at_us;
		samples[count].cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - before;
		count++;
		nanosleep(&pause, NULL);
	}
	if (count == 0) {
		printf("work_us 0\nsamples 0\n");
		return 0;
	}

	int64_t *sorted = malloc(count * sizeof(*sorted));
	if (!sorted)
		return 1;
	for (size_t i = 0; i < count; i++)
		sorted[i] = samples[i].cpu_ns;
	qsort(sorted, count, sizeof(*sorted), compare_ns);
	int64_t median = sorted[count / 2] > 0 ? sorted[count / 2] : 1;
	printf("work_us %.2f\nsamples %zu\n", median / 1000.0, count);

	int64_t start = -1, end = 0;
	double worst = 0;
	for (size_t i = 0; i < count; i++) {
		double ratio = (double)samples[i].cpu_ns / (double)median;
		int64_t finished = samples[i].at_us + samples[i].cpu_ns / 1000;

		if (ratio <= SLOW_RATIO)
			continue;
		if (start >= 0 && samples[i].at_us - end > JOIN_US) {
			printf("slow %lld %lld %.1f\n", (long long)start, (long long)end, worst);
			start = -1;
		}
		if (start < 0) {
			start = samples[i].at_us;
			worst = 0;
		}
		end = finished;
		if (ratio > worst)
			worst = ratio;
	}
	if (start >= 0)
		printf("slow %lld %lld %.1f\n", (long long)start, (long long)end, worst);
	return 0;
}
