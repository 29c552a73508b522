#!/usr/bin/env python3
"""Gettext catalogs (.mo) as parallel text: for scripts/get-catalogs.sh and
bench/tokens_kept.sh.

  catalogs.py split OUT_DIR PACKAGE_DIR...
      Each PACKAGE_DIR (an extracted Debian package: its .mo files under
      .../zh_CN/LC_MESSAGES/, its licence in usr/share/doc/*/copyright,
      and a VERSION and SPLIT file that get-catalogs.sh wrote) gives its
      translated messages as pairs, to OUT_DIR/train.tsv, dev.tsv or
      test.tsv by its split. Each split holds a pair once; dev drops the
      sources train has, and test those train or dev has, so that no test
      string was seen. OUT_DIR/sources.tsv lists each package's version,
      licence, split, catalogs and pairs.
  catalogs.py strings FILE.mo... > strings.jsonl
      One line per distinct source string: {"source", "reference" (the
      catalog's own translation), "catalog"}.
  catalogs.py translate URL [--no_template_tokens] < in > out
      Adds "translation", from POST URL/translate (en to zh, 32 strings a
      request; --no_template_tokens: translate_template_tokens true, the
      tokens translated as text); a string the server refuses gets "" and
      is counted on stderr.

Messages are read as fanyi's trainer reads catalogs (TrainingPairs in
common/formats/gettext_catalog.h): the header and untranslated messages
are skipped, a context is left out, a plural message gives (msgid,
msgstr[0]) and (msgid_plural, msgstr[1] or msgstr[0]), whitespace runs
become one space.
"""
import argparse
import json
import re
import struct
import sys
import urllib.error
import urllib.request
from pathlib import Path


def read_mo(path):
    """(msgid, msgstr) byte pairs of a .mo file, and its charset."""
    data = Path(path).read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    if struct.unpack(order + "I", data[:4])[0] != 0x950412DE:
        raise ValueError(f"{path}: not a .mo file")
    count, originals, translations = struct.unpack(order + "3I", data[8:20])
    pairs = []
    for i in range(count):
        length, offset = struct.unpack(order + "2I",
                                       data[originals + 8 * i:][:8])
        msgid = data[offset:offset + length]
        length, offset = struct.unpack(order + "2I",
                                       data[translations + 8 * i:][:8])
        pairs.append((msgid, data[offset:offset + length]))
    charset = "utf-8"
    for msgid, msgstr in pairs:
        if msgid == b"":
            match = re.search(rb"charset=([A-Za-z0-9_.:-]+)", msgstr)
            if match and match.group(1).lower() != b"charset":
                charset = match.group(1).decode()
    return pairs, charset


def squeezed(text):
    return " ".join(text.split())


def messages(path):
    """(source, target) pairs of a .mo file, as the trainer reads them."""
    pairs, charset = read_mo(path)
    for msgid, msgstr in pairs:
        try:
            source = msgid.decode(charset).split("\x04")[-1]
            target = msgstr.decode(charset)
        except (UnicodeDecodeError, LookupError):
            continue
        if not source:
            continue  # The header.
        sources = source.split("\0")
        targets = target.split("\0")
        forms = [(sources[0], targets[0])]
        if len(sources) > 1:
            forms.append((sources[1],
                          targets[1] if len(targets) > 1 else targets[0]))
        for one, other in forms:
            one, other = squeezed(one), squeezed(other)
            if one and other:
                yield one, other


def licence(package_dir):
    """The licences a package's copyright file names."""
    names = []
    for copyright_file in sorted(Path(package_dir).glob(
            "usr/share/doc/*/copyright")):
        for line in copyright_file.read_text(errors="replace").splitlines():
            if line.startswith("License:"):
                name = line[len("License:"):].strip()
                if name and name not in names:
                    names.append(name)
    return "; ".join(names[:4]) or "see the package's copyright file"


def split(out_dir, package_dirs):
    out = Path(out_dir)
    order = ["train", "dev", "test"]
    sources_in = {which: set() for which in order}
    pairs_in = {which: [] for which in order}
    distinct = {which: set() for which in order}
    rows = []
    # Train first, then dev, then test: each later split drops the sources
    # an earlier one holds.
    packages = [Path(d) for d in package_dirs]
    packages.sort(key=lambda p: order.index((p / "SPLIT").read_text().strip()))
    for package in packages:
        which = (package / "SPLIT").read_text().strip()
        earlier = order[:order.index(which)]
        catalogs = sorted(p for p in package.rglob("*.mo")
                          if "zh_CN" in p.parts or "zh-CN" in p.parts)
        count = 0
        for catalog in catalogs:
            for pair in messages(catalog):
                source, target = pair
                if ("\t" in source or "\t" in target or pair in distinct[which]
                        or any(source in sources_in[e] for e in earlier)):
                    continue
                distinct[which].add(pair)
                sources_in[which].add(source)
                pairs_in[which].append(pair)
                count += 1
        rows.append((package.name, (package / "VERSION").read_text().strip(),
                     licence(package), which, str(len(catalogs)), str(count)))
    for which in order:
        with open(out / f"{which}.tsv", "w", encoding="utf-8") as tsv:
            for source, target in pairs_in[which]:
                tsv.write(f"{source}\t{target}\n")
        print(f"catalogs.py: {which}: {len(pairs_in[which])} pairs",
              file=sys.stderr)
    with open(out / "sources.tsv", "w", encoding="utf-8") as sources:
        sources.write("package\tversion\tlicence\tsplit\tcatalogs\tpairs\n")
        for row in rows:
            sources.write("\t".join(row) + "\n")


def strings(paths):
    seen = set()
    for path in paths:
        for source, target in messages(path):
            if source in seen:
                continue
            seen.add(source)
            print(json.dumps({"source": source, "reference": target,
                              "catalog": Path(path).stem},
                             ensure_ascii=False))


def post(url, texts, template_tokens):
    body = json.dumps({"q": texts, "source": "en", "target": "zh",
                       "format": "text",
                       "translate_template_tokens": not template_tokens}
                      ).encode()
    request = urllib.request.Request(
        url + "/translate", data=body,
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)["translatedText"]


def translate(url, template_tokens):
    entries = [json.loads(line) for line in sys.stdin if line.strip()]
    refused = 0
    for start in range(0, len(entries), 32):
        batch = entries[start:start + 32]
        texts = [entry["source"] for entry in batch]
        try:
            translations = post(url, texts, template_tokens)
        except urllib.error.HTTPError as error:
            if error.code != 400:
                raise
            translations = []  # One at a time: which were refused.
            for text in texts:
                try:
                    translations.append(post(url, [text], template_tokens)[0])
                except urllib.error.HTTPError as each:
                    if each.code != 400:
                        raise
                    translations.append("")
                    refused += 1
        for entry, translation in zip(batch, translations):
            entry["translation"] = translation
            print(json.dumps(entry, ensure_ascii=False))
    print(f"catalogs.py: {len(entries)} strings, {refused} refused",
          file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    split_command = commands.add_parser("split")
    split_command.add_argument("out_dir")
    split_command.add_argument("package_dirs", nargs="+")
    strings_command = commands.add_parser("strings")
    strings_command.add_argument("paths", nargs="+")
    translate_command = commands.add_parser("translate")
    translate_command.add_argument("url")
    translate_command.add_argument("--no_template_tokens",
                                   action="store_true")
    args = parser.parse_args()
    if args.command == "split":
        split(args.out_dir, args.package_dirs)
    elif args.command == "strings":
        strings(args.paths)
    else:
        translate(args.url.rstrip("/"), not args.no_template_tokens)


if __name__ == "__main__":
    main()
