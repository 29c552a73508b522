#!/usr/bin/env python3
"""Office documents and PDFs made and read by their real producers, for
tests/document_files_test.cc:

  office_documents.py make KIND OUT   writes a document of KIND: odt and odp
                                      with odfpy, pptx with python-pptx, pdf
                                      with LibreOffice (from an odfpy .odt);
                                      dense-pdf, a hostile PDF written here:
                                      pages of 14,400 words each, which
                                      poppler lays out in time that grows
                                      with the square of a page's words
  office_documents.py read KIND IN    what the producer reads of it, as JSON
  office_documents.py render IN DIR   the text LibreOffice lays out of IN
                                      (converted to PDF in DIR, read by
                                      pdftotext): it opens the file

Every document holds plain paragraphs, a paragraph with a bold word, a
link or a table, and notes or a header, so that the reading can show what
was kept.
"""
import json
import os
import subprocess
import sys
import zlib

# The plain paragraphs, each one sentence the test can translate alone.
PLAIN = ["I love you.", "I like tea.", "The weather is lovely today."]
LONG = ("We are going for a long walk in the park because the weather is "
        "lovely today, and afterwards we will drink some tea with our "
        "friends who live near the station in the old town by the river.")


def make_odt(path, page_break=False):
    from odf.opendocument import OpenDocumentText
    from odf.style import (Header, MasterPage, PageLayout,
                           ParagraphProperties, Style, TextProperties)
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import A, H, P, S, Span

    doc = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    big = Style(name="Big", family="paragraph")
    big.addElement(TextProperties(fontsize="24pt"))
    doc.automaticstyles.addElement(big)
    next_page = Style(name="NextPage", family="paragraph")
    next_page.addElement(ParagraphProperties(breakbefore="page"))
    doc.automaticstyles.addElement(next_page)
    layout = PageLayout(name="Layout")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    header = Header()
    header.addElement(P(text="Monthly report"))
    master.addElement(header)
    doc.masterstyles.addElement(master)

    doc.text.addElement(H(outlinelevel=1, stylename=big,
                          text="A Walk in the Park"))
    for sentence in PLAIN:
        doc.text.addElement(P(text=sentence))
    walk = P(text="We are going for a ")
    walk.addElement(Span(stylename=bold, text="walk"))
    walk.addText(" in the")
    walk.addElement(S())
    walk.addText("park.")
    doc.text.addElement(walk)
    link = P(text="See ")
    link.addElement(A(href="https://example.org/", text="the morning"))
    link.addText(" again.")
    doc.text.addElement(link)
    table = Table(name="Drinks")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for row_text in (("I like tea.", "I love you."),):
        row = TableRow()
        for cell_text in row_text:
            cell = TableCell()
            cell.addElement(P(text=cell_text))
            row.addElement(cell)
        table.addElement(row)
    doc.text.addElement(table)
    doc.text.addElement(P(text=LONG))
    if page_break:
        doc.text.addElement(P(stylename=next_page, text="I love you."))
    doc.save(path)


def make_odp(path):
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import (MasterPage, PageLayout, PageLayoutProperties,
                           Style, TextProperties)
    from odf.text import P, Span

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="Layout")
    layout.addElement(PageLayoutProperties(pagewidth="28cm",
                                           pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)

    def frame(y, paragraphs):
        shape = Frame(width="24cm", height="4cm", x="2cm", y=y)
        box = TextBox()
        for paragraph in paragraphs:
            box.addElement(paragraph)
        shape.addElement(box)
        return shape

    one = Page(name="one", masterpagename=master)
    one.addElement(frame("2cm", [P(text="A Walk in the Park")]))
    one.addElement(frame("7cm", [P(text=sentence) for sentence in PLAIN]))
    notes = Notes()
    notes.addElement(frame("2cm", [P(text="Speak slowly.")]))
    one.addElement(notes)
    doc.presentation.addElement(one)
    two = Page(name="two", masterpagename=master)
    walk = P(text="We are going for a ")
    walk.addElement(Span(stylename=bold, text="walk"))
    walk.addText(" in the park.")
    two.addElement(frame("2cm", [walk]))
    doc.presentation.addElement(two)
    doc.save(path)


def make_pptx(path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    title = deck.slides.add_slide(deck.slide_layouts[0])
    title.shapes.title.text = "A Walk in the Park"
    title.placeholders[1].text = "I love you."
    body = deck.slides.add_slide(deck.slide_layouts[1])
    body.shapes.title.text = "Morning"
    frame = body.placeholders[1].text_frame
    frame.text = PLAIN[2]
    walk = frame.add_paragraph()
    for text, bold in (("We are going for a ", False), ("walk", True),
                       (" in the park.", False)):
        run = walk.add_run()
        run.text = text
        run.font.bold = bold
    body.notes_slide.notes_text_frame.text = "Speak slowly."
    drinks = deck.slides.add_slide(deck.slide_layouts[5])
    drinks.shapes.title.text = "Drinks"
    table = drinks.shapes.add_table(1, 2, Inches(1), Inches(2), Inches(6),
                                    Inches(1)).table
    table.cell(0, 0).text = "I like tea."
    table.cell(0, 1).text = "I love you."
    deck.save(path)


def make_pdf(path):
    folder = os.path.dirname(os.path.abspath(path))
    source = os.path.join(folder, "pdf_source.odt")
    make_odt(source, page_break=True)
    convert(source, folder, "pdf")
    os.replace(os.path.join(folder, "pdf_source.pdf"), path)


def make_dense_pdf(path, pages=20, rows=120, columns=120):
    """A small PDF whose pages all draw one compressed content stream of
    rows x columns words in 1.5-point type, far apart for their size (each
    a block of its own to poppler), each word two characters that
    its font's ToUnicode map reads as U+0001 (so that they are dropped and
    count for little against a text limit), and one word "BB": a few KB
    that take poppler minutes."""
    content = bytearray(b"BT /F1 1.5 Tf\n")
    for row in range(rows):
        for column in range(columns):
            content += b"1 0 0 1 %.2f %.2f Tm (AA) Tj\n" % (
                5 + column * 600.0 / columns, 785 - row * 780.0 / rows)
    content = zlib.compress(bytes(content + b"1 0 0 1 5 5 Tm (BB) Tj ET\n"))
    to_unicode = zlib.compress(
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap "
        b"/CMapName /Dense def /CMapType 2 def\n"
        b"1 begincodespacerange <00> <FF> endcodespacerange\n"
        b"2 beginbfchar <41> <0001> <42> <0042> endbfchar endcmap "
        b"CMapName currentdict /CMap defineresource pop end end")
    page_ids = [6 + i for i in range(pages)]
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
            b" ".join(b"%d 0 R" % i for i in page_ids), pages),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
           b"/ToUnicode 5 0 R >>",
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (
            len(content), content),
        5: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (
            len(to_unicode), to_unicode),
    }
    for i in page_ids:
        objects[i] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                      b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for number in sorted(objects):
        out += b"%010d 00000 n \n" % offsets[number]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)


def convert(path, folder, to):
    """LibreOffice, headless, with a profile of its own in `folder`."""
    profile = "file://" + os.path.join(os.path.abspath(folder), "profile")
    subprocess.run(["soffice", "-env:UserInstallation=" + profile,
                    "--headless", "--convert-to", to, "--outdir", folder,
                    path], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=300)


def read_odf(path):
    from odf import teletype
    from odf.opendocument import load
    from odf.table import TableCell
    from odf.text import A, H, P, Span

    doc = load(path)
    body = doc.text if doc.mimetype.endswith(".text") else doc.presentation
    paragraphs = [teletype.extractText(p)
                  for p in body.getElementsByType(P) + body.getElementsByType(H)
                  if p.parentNode.tagName != "table:table-cell"]
    styles = sorted(span.getAttribute("stylename")
                    for span in body.getElementsByType(Span))
    bold = [teletype.extractText(span) for span in body.getElementsByType(Span)
            if span.getAttribute("stylename") == "Bold"]
    return {
        "mimetype": doc.mimetype,
        "paragraphs": paragraphs,
        "span_styles": styles,
        "bold": bold,
        "links": [a.getAttribute("href") for a in body.getElementsByType(A)],
        "cells": [teletype.extractText(cell)
                  for cell in body.getElementsByType(TableCell)],
        "header": [teletype.extractText(p)
                   for p in doc.masterstyles.getElementsByType(P)],
    }


def read_pptx(path):
    from pptx import Presentation

    deck = Presentation(path)
    slides = []
    for slide in deck.slides:
        paragraphs, bold, cells = [], [], []
        for shape in slide.shapes:
            if shape.has_text_frame:
                for paragraph in shape.text_frame.paragraphs:
                    paragraphs.append(paragraph.text)
                    bold += [run.text for run in paragraph.runs
                             if run.font.bold]
            if shape.has_table:
                cells += [cell.text for row in shape.table.rows
                          for cell in row.cells]
        notes = (slide.notes_slide.notes_text_frame.text
                 if slide.has_notes_slide else "")
        slides.append({"paragraphs": paragraphs, "bold": bold,
                       "cells": cells, "notes": notes,
                       "layout": slide.slide_layout.name})
    return {"slides": slides}


def render(path, folder):
    """What LibreOffice shows of `path`: its text, laid out as a PDF."""
    os.makedirs(folder, exist_ok=True)
    convert(path, folder, "pdf")
    stem = os.path.splitext(os.path.basename(path))[0]
    pdf = os.path.join(folder, stem + ".pdf")
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", pdf, "-"],
                          check=True, capture_output=True).stdout
    sys.stdout.write(text.decode("utf-8"))


def main():
    command = sys.argv[1]
    if command == "make":
        {"odt": make_odt, "odp": make_odp, "pptx": make_pptx,
         "pdf": make_pdf, "dense-pdf": make_dense_pdf}[sys.argv[2]](
             sys.argv[3])
    elif command == "read":
        reader = read_pptx if sys.argv[2] == "pptx" else read_odf
        print(json.dumps(reader(sys.argv[3]), ensure_ascii=False))
    elif command == "render":
        render(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
