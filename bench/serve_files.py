"""Times file translation against one /translate request of the same
sentences, on a running fanyi-server (bench/serve_files.sh starts one).

Usage: serve_files.py BASE_URL SENTENCES_FILE ROUNDS
Each round sends, in turn, the sentences as /translate's q (an array), and
as a .txt (a line each), .srt (a cue each), .md (a paragraph each) and a
.docx (a paragraph each, every third with a bold word) through
/translate_file, then downloads the file. Prints each one's median
seconds over the rounds and its ratio to /translate's.
"""
import io
import json
import statistics
import sys
import time
import urllib.request
import uuid
import zipfile
from xml.sax.saxutils import escape

base, sentences_path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(sentences_path, encoding="utf-8") as f:
    sentences = [line.strip() for line in f if line.strip()]

WORD_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx():
    paragraphs = []
    for i, sentence in enumerate(sentences):
        words = sentence.split(" ")
        if i % 3 == 0 and len(words) > 2:  # A bold word in the middle.
            runs = (f'<w:r><w:t xml:space="preserve">{escape(" ".join(words[:1]))} </w:t></w:r>'
                    f'<w:r><w:rPr><w:b/></w:rPr><w:t>{escape(words[1])}</w:t></w:r>'
                    f'<w:r><w:t xml:space="preserve"> {escape(" ".join(words[2:]))}</w:t></w:r>')
        else:
            runs = f"<w:r><w:t>{escape(sentence)}</w:t></w:r>"
        paragraphs.append(f"<w:p>{runs}</w:p>")
    document = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                f'<w:document xmlns:w="{WORD_NS}"><w:body>{"".join(paragraphs)}'
                f"<w:sectPr/></w:body></w:document>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.'
            'openxmlformats.org/package/2006/content-types"><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.'
            'wordprocessingml.document.main+xml"/></Types>'))
        package.writestr("word/document.xml", document)
    return out.getvalue()


files = {
    "talk.txt": "\n".join(sentences).encode(),
    "talk.srt": "".join(
        f"{i + 1}\n00:00:{i % 60:02d},000 --> 00:00:{i % 60:02d},900\n{s}\n\n"
        for i, s in enumerate(sentences)).encode(),
    "notes.md": "\n\n".join(sentences).encode(),
    "letter.docx": docx(),
}


def post(path, body, content_type):
    request = urllib.request.Request(base + path, data=body,
                                     headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=600) as answer:
        return answer.read()


def translate():
    body = json.dumps({"q": sentences, "source": "en", "target": "zh"}).encode()
    post("translate", body, "application/json")


def translate_file(name):
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
             .encode() for key, value in (("source", "en"), ("target", "zh"))]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                 .encode() + files[name] + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    answer = json.loads(post("translate_file", body,
                             f"multipart/form-data; boundary={boundary}"))
    with urllib.request.urlopen(answer["translatedFileUrl"], timeout=60) as f:
        f.read()


cases = {"/translate (q array)": translate}
for name in files:
    cases[f"/translate_file {name}"] = lambda name=name: translate_file(name)
times = {case: [] for case in cases}
for case, run in cases.items():  # Warm-up.
    run()
for _ in range(rounds):
    for case, run in cases.items():
        start = time.perf_counter()
        run()
        times[case].append(time.perf_counter() - start)
reference = statistics.median(times["/translate (q array)"])
print(f"{len(sentences)} sentences, {rounds} rounds, median seconds:")
for case, seconds in times.items():
    median = statistics.median(seconds)
    print(f"  {case:32} {median:7.3f} s  x{median / reference:.3f}"
          f"  (min {min(seconds):.3f}, max {max(seconds):.3f})")
