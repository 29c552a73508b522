#!/usr/bin/env python3
"""Checks and tabulates the runs of scripts/soak.sh.

Reads the fanyi-loadgen JSON reports, RSS samples (kB, one per second) and
/metrics scrapes that soak.sh left in --dir, prints one table row per run and
exits 1 if any check fails:

  soak       every request OK; the server's median RSS in the last minute
             at most 10% above its median in the first minute (after the
             warm-up; single samples swing by +-15% with batch shapes); p99
             of the last minute at most 1.25 x the first minute's.
  deadlines  only OK and DEADLINE_EXCEEDED; every request answered; after the
             run no decoding step runs (fanyi_batch_size_count unchanged over
             a second) and no request is in flight.
  overload   only OK and RESOURCE_EXHAUSTED; every request answered; the
             slowest rejection under 1 s; peak RSS at most 1.5 x RSS after
             the overload server's warm-up (64 clients, whole batches).
"""

import argparse
import json
import pathlib
import re
import statistics
import sys


def load_report(directory, name):
    return json.loads((directory / f"{name}.json").read_text())


def rss_after(directory, name):
    return int((directory / f"{name}.rss_after").read_text().split()[0])


def rss_samples(directory, name):
    text = (directory / f"{name}.rss").read_text()
    return [int(line) for line in text.split() if line.isdigit()]


def rss_during(directory, server, run):
    """The server's RSS samples (kB) taken while `run` was going on."""
    first, last = map(int, (directory / f"{run}.rss_lines").read_text().split())
    return rss_samples(directory, server)[first - 1:last]


def metric(directory, name, series):
    """The value of `series` (name and labels as exposed) in a scrape."""
    text = (directory / f"{name}.metrics").read_text()
    pattern = re.compile(r"^" + re.escape(series) + r" (\S+)$", re.MULTILINE)
    found = pattern.search(text)
    return float(found.group(1)) if found else 0.0


def rss_summary(directory, server, run):
    """Median (min-max) RSS in MB while `run` went on."""
    samples = rss_during(directory, server, run)
    if not samples:
        return "-"
    return (f"{statistics.median(samples) / 1024:.0f} "
            f"({min(samples) / 1024:.0f}-{max(samples) / 1024:.0f})")


def codes(report):
    return " ".join(f"{code} {count}"
                    for code, count in sorted(report["status_counts"].items()))


class Checks:

    def __init__(self):
        self.failures = []

    def expect(self, condition, message):
        print(f"  {'ok  ' if condition else 'FAIL'} {message}")
        if not condition:
            self.failures.append(message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, type=pathlib.Path)
    parser.add_argument("--minutes", required=True, type=int)
    args = parser.parse_args()
    directory = args.dir
    checks = Checks()

    rows = []

    def row(label, report, rss_mb):
        latency = report["latency_ms"]
        slowest = " ".join(
            f"{code} {ms:.0f}"
            for code, ms in sorted(report["status_max_latency_ms"].items()))
        rows.append(
            f"| {label} | {report['requests_sent']} | {codes(report)} | "
            f"{report['sentences_per_second']:.1f} | {latency['p50']:.0f} | "
            f"{latency['p99']:.0f} | {slowest} | {rss_mb} |")

    capacity = load_report(directory, "capacity")
    row("capacity, 64 clients", capacity,
        rss_summary(directory, "main", "capacity"))

    # Soak.
    print("soak")
    row("soak warm-up", load_report(directory, "soak-warmup"),
        rss_summary(directory, "main", "soak-warmup"))
    minutes = [load_report(directory, f"soak-{m}")
               for m in range(1, args.minutes + 1)]
    for m, report in enumerate(minutes, start=1):
        row(f"soak minute {m}", report,
            rss_summary(directory, "main", f"soak-{m}"))
        checks.expect(
            report["status_counts"] == {"OK": report["requests_sent"]},
            f"minute {m}: all {report['requests_sent']} requests OK "
            f"({codes(report)})")
    first_rss = statistics.median(rss_during(directory, "main", "soak-1"))
    last_samples = rss_during(directory, "main", f"soak-{args.minutes}")
    last_rss = statistics.median(last_samples)
    growth = last_rss / first_rss - 1
    checks.expect(
        growth < 0.10,
        f"median RSS {first_rss / 1024:.0f} MB in the first minute -> "
        f"{last_rss / 1024:.0f} MB in the last ({growth:+.1%}, limit +10%; "
        f"last minute {min(last_samples) / 1024:.0f}-"
        f"{max(last_samples) / 1024:.0f} MB)")
    first_p99 = minutes[0]["latency_ms"]["p99"]
    last_p99 = minutes[-1]["latency_ms"]["p99"]
    checks.expect(
        last_p99 <= 1.25 * first_p99,
        f"p99 first minute {first_p99:.0f} ms, last {last_p99:.0f} ms "
        f"(ratio {last_p99 / first_p99:.2f}, limit 1.25)")

    # Deadlines.
    print("deadlines")
    deadline = load_report(directory, "deadline")
    row("100 ms deadlines, 2 x capacity", deadline,
        rss_summary(directory, "main", "deadline"))
    checks.expect(
        set(deadline["status_counts"]) <= {"OK", "DEADLINE_EXCEEDED"},
        f"only OK and DEADLINE_EXCEEDED ({codes(deadline)})")
    checks.expect(deadline["requests_completed"] == deadline["requests_sent"],
                  f"{deadline['requests_completed']} of "
                  f"{deadline['requests_sent']} answered")
    steps = [
        metric(directory, name, 'fanyi_batch_size_count{model="en-zh"}')
        for name in ("deadline-after1", "deadline-after2")]
    checks.expect(steps[0] == steps[1],
                  f"decoding steps a second apart after the run: "
                  f"{steps[0]:.0f}, {steps[1]:.0f}")
    in_flight = metric(directory, "deadline-after2", "fanyi_requests_in_flight")
    checks.expect(in_flight == 0, f"requests in flight after: {in_flight:.0f}")
    server_expired = metric(
        directory, "deadline-after2",
        'fanyi_requests_total{code="DEADLINE_EXCEEDED",method="Translate",'
        'model="en-zh"}')
    print(f"  server counted {server_expired:.0f} DEADLINE_EXCEEDED")

    # Overload.
    print("overload")
    overload = load_report(directory, "overload")
    baseline = rss_after(directory, "overload-warmup")
    peak = max(rss_during(directory, "overload", "overload"))
    row(f"overload, --max_queue 16, {overload['offered_rate']:.0f}/s offered",
        overload, rss_summary(directory, "overload", "overload"))
    checks.expect(
        set(overload["status_counts"]) <= {"OK", "RESOURCE_EXHAUSTED"},
        f"only OK and RESOURCE_EXHAUSTED ({codes(overload)})")
    checks.expect(overload["requests_completed"] == overload["requests_sent"],
                  f"{overload['requests_completed']} of "
                  f"{overload['requests_sent']} answered")
    slowest_reject = overload["status_max_latency_ms"].get(
        "RESOURCE_EXHAUSTED", 0)
    checks.expect(slowest_reject < 1000,
                  f"slowest RESOURCE_EXHAUSTED {slowest_reject:.0f} ms "
                  "(limit 1000)")
    checks.expect(
        peak <= 1.5 * baseline,
        f"peak RSS {peak / 1024:.0f} MB vs {baseline / 1024:.0f} MB after "
        "warm-up (limit 1.5x)")

    print()
    print("| Run | Sent | Status | OK/s | p50 ms | p99 ms | Slowest ms by code "
          "| Server RSS MB, median (range) |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if checks.failures:
        print(f"\n{len(checks.failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
