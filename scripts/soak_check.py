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
  abuse      honest traffic beside hostile HTTP bodies: every honest gRPC
             request OK and every honest HTTP exchange 200, with p99s at
             most ABUSE_P99_FACTOR x those of the same traffic alone; every
             hostile body refused with 400 (the hang-ups get no answer);
             peak RSS at most 256 MiB above the peak of the run alone.
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


# Two cores shared by decoding and by the parsing of hostile bodies (which
# may take up to 0.5 s + 1 s/MiB of CPU each before it is refused): honest
# requests may wait for a core, but not more than this.
ABUSE_P99_FACTOR = 2.0
ABUSE_RSS_MARGIN_KB = 256 * 1024


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

    # Abuse.
    print("abuse")
    alone = load_report(directory, "abuse-baseline")
    attacked = load_report(directory, "abuse")
    row("16 clients alone", alone,
        rss_summary(directory, "main", "abuse-baseline"))
    row("16 clients beside 4 hostile HTTP clients", attacked,
        rss_summary(directory, "main", "abuse"))
    for label, report in (("alone", alone), ("attacked", attacked)):
        checks.expect(
            report["status_counts"] == {"OK": report["requests_sent"]},
            f"gRPC {label}: all {report['requests_sent']} OK ({codes(report)})")
    checks.expect(
        attacked["latency_ms"]["p99"] <=
        ABUSE_P99_FACTOR * alone["latency_ms"]["p99"],
        f"gRPC p99 {alone['latency_ms']['p99']:.0f} ms alone, "
        f"{attacked['latency_ms']['p99']:.0f} ms attacked "
        f"(limit {ABUSE_P99_FACTOR} x)")
    http_alone = json.loads((directory / "abuse-baseline-http.json").read_text())
    http_attacked = json.loads((directory / "abuse-http.json").read_text())
    for name in ("health", "translate"):
        before = http_alone["honest"][name]
        after = http_attacked["honest"][name]
        for label, summary in (("alone", before), ("attacked", after)):
            checks.expect(
                set(summary["status_counts"]) == {"200"},
                f"HTTP {name} {label}: {summary['status_counts']}")
        checks.expect(
            after["p99_ms"] <= ABUSE_P99_FACTOR * max(before["p99_ms"], 10),
            f"HTTP {name} p99 {before['p99_ms']:.0f} ms alone, "
            f"{after['p99_ms']:.0f} ms attacked (slowest {after['max_ms']:.0f}"
            f" ms; limit {ABUSE_P99_FACTOR} x, at least 10 ms alone)")
    for name, summary in sorted(http_attacked["hostile"].items()):
        expected = {"0"} if "hang-up" in name else {"400"}
        checks.expect(
            set(summary["status_counts"]) == expected,
            f"{name}: {summary['status_counts']}, slowest "
            f"{summary['max_ms']:.0f} ms")
    peak_alone = max(rss_during(directory, "main", "abuse-baseline"))
    peak_attacked = max(rss_during(directory, "main", "abuse"))
    checks.expect(
        peak_attacked <= peak_alone + ABUSE_RSS_MARGIN_KB,
        f"peak RSS {peak_alone / 1024:.0f} MB alone, "
        f"{peak_attacked / 1024:.0f} MB attacked (limit +256 MiB)")

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
