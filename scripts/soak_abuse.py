#!/usr/bin/env python3
"""Hostile HTTP bodies beside honest HTTP traffic, for scripts/soak.sh.

Runs for --seconds against a fanyi-server's LibreTranslate API on
127.0.0.1:--port:
  --honest clients, each asking in turn for /health and a plain translation
  of a short dev sentence, timing each exchange;
  --attackers clients, each sending the hostile classes below one after the
  other, round and round (none when 0: the baseline), from the addresses
  of --attacker_addresses in turn (127.0.0.2 and 127.0.0.3: the server
  keeps each address's requests in their own queue, FairPool).
Writes a JSON report (--json): the honest exchanges' status counts and
latency percentiles, and per hostile class the status counts and the
slowest answer. soak_check.py checks it.
"""

import argparse
import io
import json
import random
import socket
import statistics
import threading
import time
import zipfile

ANSWER_GUARD_S = 60


def exchange(port, request, hang_up=False, source="127.0.0.1"):
    """Sends `request` (bytes) from address `source` and returns the
    answer's status, or 0 when hang_up is set (the request is sent and the
    connection closed)."""
    with socket.create_connection(("127.0.0.1", port),
                                  timeout=ANSWER_GUARD_S,
                                  source_address=(source, 0)) as connection:
        connection.sendall(request)
        if hang_up:
            return 0
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
        # Read to the end: the server closes after answering.
        while connection.recv(65536):
            pass
    status_line = answer.split(b"\r\n", 1)[0].split()
    return int(status_line[1]) if len(status_line) > 1 else -1


def post(path, content_type, body):
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode() + body


def json_translate(fields):
    return post("/translate", "application/json",
                ('{"source":"en","target":"zh",' + fields + "}").encode())


def file_upload(filename, content):
    boundary = b"fanyi-abuse-boundary"
    body = b""
    for name, value in (("source", b"en"), ("target", b"zh")):
        body += (b"--" + boundary + b"\r\nContent-Disposition: form-data; "
                 b'name="' + name.encode() + b'"\r\n\r\n' + value + b"\r\n")
    body += (b"--" + boundary + b"\r\nContent-Disposition: form-data; "
             b'name="file"; filename="' + filename.encode() +
             b'"\r\nContent-Type: application/octet-stream\r\n\r\n' + content +
             b"\r\n--" + boundary + b"--\r\n")
    return post("/translate_file",
                "multipart/form-data; boundary=" + boundary.decode(), body)


def docx(body):
    document = ('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w='
                '"http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                "<w:body>" + body + "</w:body></w:document>")
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.'
            'org/package/2006/content-types"/>')
        package.writestr("word/document.xml", document)
    return packed.getvalue()


def hostile_classes():
    """(name, request bytes, hang up) for each class of hostile request."""
    many_sentences = " ".join(["This sentence is long enough to decode."] * 400)
    return [
        ("html 100000 deep",
         json_translate('"format":"html","q":"' + "<div>" * 100000 + 'x"'),
         False),
        ("html 600 KB unclosed",
         json_translate('"format":"html","q":"' + "<a><b><i>" *
                        (600 * 1024 // 9) + '"'), False),
        ("html 600 KB <h1><li>",
         json_translate('"format":"html","q":"' + "<h1><li>" *
                        (600 * 1024 // 8) + '"'), False),
        ("json 100000 deep",
         json_translate('"q":' + "[" * 100000 + "]" * 100000), False),
        ("docx 100000 deep",
         file_upload("deep.docx",
                     docx("<w:tbl>" * 100000 + "</w:tbl>" * 100000)), False),
        ("docx 4 million elements",
         file_upload("wide.docx", docx("<w:e/>" * 4000000)), False),
        ("srt 100 KB of <a",
         file_upload("tags.srt", b"1\n00:00:01,000 --> 00:00:02,000\n" +
                     b"<a" * 50000 + b" tea\n"), False),
        ("alternatives 2^32 + 2",
         json_translate('"q":"tea","alternatives":4294967298'), False),
        ("400 sentences, then a hang-up",
         json_translate('"q":"' + many_sentences + '"'), True),
    ]


class Recorder:
    """Thread-safe tallies: statuses and latencies per name."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}
        self.latencies = {}

    def add(self, name, status, seconds):
        with self.lock:
            counts = self.statuses.setdefault(name, {})
            counts[str(status)] = counts.get(str(status), 0) + 1
            self.latencies.setdefault(name, []).append(seconds)


def timed(recorder, name, port, request, hang_up=False, source="127.0.0.1"):
    start = time.monotonic()
    try:
        status = exchange(port, request, hang_up, source)
    except Exception as error:  # pylint: disable=broad-except
        # Counted under its name: a check fails on it, nothing is lost.
        status = type(error).__name__
    recorder.add(name, status, time.monotonic() - start)


def honest_client(port, sentences, deadline, seed, recorder):
    chooser = random.Random(seed)
    health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    while time.monotonic() < deadline:
        timed(recorder, "health", port, health)
        text = json.dumps(chooser.choice(sentences))
        timed(recorder, "translate", port, json_translate('"q":' + text))


def attacker(port, classes, deadline, offset, source, recorder):
    turn = offset
    while time.monotonic() < deadline:
        name, request, hang_up = classes[turn % len(classes)]
        timed(recorder, name, port, request, hang_up, source)
        turn += 1


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sources", required=True,
                        help="TSV or text file; the first column is English")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--honest", type=int, default=2)
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument("--attacker_addresses", default="127.0.0.2,127.0.0.3")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    with open(args.sources, encoding="utf-8") as sources:
        sentences = [line.split("\t")[0].strip() for line in sources]
    sentences = [sentence for sentence in sentences if sentence][:500]
    classes = hostile_classes() if args.attackers else []
    addresses = args.attacker_addresses.split(",")
    recorder = Recorder()
    deadline = time.monotonic() + args.seconds
    threads = [
        threading.Thread(target=honest_client,
                         args=(args.port, sentences, deadline, seed, recorder))
        for seed in range(args.honest)
    ] + [
        threading.Thread(target=attacker,
                         args=(args.port, classes, deadline, offset,
                               addresses[offset % len(addresses)], recorder))
        for offset in range(args.attackers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    report = {"seconds": args.seconds, "honest": {}, "hostile": {}}
    for name, counts in recorder.statuses.items():
        latencies = recorder.latencies[name]
        summary = {
            "status_counts": counts,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * percentile(latencies, 0.99),
            "max_ms": 1000 * max(latencies),
        }
        side = "honest" if name in ("health", "translate") else "hostile"
        report[side][name] = summary
    with open(args.json, "w", encoding="utf-8") as out:
        json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
