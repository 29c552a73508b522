#!/usr/bin/env python3
"""An EPUB made and read by EbookLib, the EPUB producer and reader that
Python programs use, for tests/http_api_test.cc:

  epub_book.py make OUT.epub   a book of two chapters (paragraphs, a bold
                               word, a link), its navigation and metadata
  epub_book.py read IN.epub    what EbookLib reads of it, as JSON: title,
                               language, author, the spine's and the table
                               of contents' order, the first entry's name
                               and compression, and each XHTML document and the NCX
"""
import json
import sys
import zipfile

from ebooklib import epub


def make(path):
    book = epub.EpubBook()
    book.set_identifier("fanyi-test-book")
    book.set_title("A Walk in the Park")
    book.set_language("en")
    book.add_author("Ann Example")
    one = epub.EpubHtml(title="Morning", file_name="chapter1.xhtml", lang="en")
    one.content = ("<h1>Morning</h1><p>The weather is lovely today.</p>"
                   "<p>We are going for a <b>walk</b> in the park.</p>")
    two = epub.EpubHtml(title="Evening", file_name="chapter2.xhtml", lang="en")
    two.content = ("<h1>Evening</h1><p>I like tea.</p>"
                   "<p>See <a href=\"chapter1.xhtml\">the morning</a> again.</p>")
    style = epub.EpubItem(uid="style", file_name="style.css",
                          media_type="text/css", content=b"p { margin: 0; }")
    for item in (one, two, style):
        book.add_item(item)
    book.toc = (epub.Link("chapter1.xhtml", "Morning", "morning"),
                epub.Link("chapter2.xhtml", "Evening", "evening"))
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", one, two]
    epub.write_epub(path, book)


def read(path):
    book = epub.read_epub(path)
    with zipfile.ZipFile(path) as archive:
        first = archive.infolist()[0]
        documents = {name: archive.read(name).decode("utf-8")
                     for name in archive.namelist()
                     if name.endswith((".xhtml", ".ncx"))}
    print(json.dumps({
        "title": book.get_metadata("DC", "title")[0][0],
        "language": book.get_metadata("DC", "language")[0][0],
        "author": book.get_metadata("DC", "creator")[0][0],
        "spine": [entry[0] for entry in book.spine],
        "toc": [link.title for link in book.toc],
        "first_entry": first.filename,
        "first_entry_stored": first.compress_type == zipfile.ZIP_STORED,
        "documents": documents,
    }, ensure_ascii=False))


if __name__ == "__main__":
    {"make": make, "read": read}[sys.argv[1]](sys.argv[2])
