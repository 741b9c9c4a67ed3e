"""Checks a page as a browser saw it: the DOM chromium dumped (--dump-dom)
and the log it wrote (--enable-logging=stderr), for harness/tests/html.sh.

usage: html_check.py PAGE.html DOM LOG [--title T] [--tables N] [--figures N]
                     [--trends N] [--links N] [--rows TABLE:N] [--heading H]...
                     [--text T]... [--pre T]... [--no-pre T]...

Always: no console message (the pages run no script, so anything on the
console is an error: a blocked load, a blocked script), no <script>, every
image inlined (data:), every link to a file that exists beside the page, no
"figure missing" note. --figures N: N <figure>s, each an inline SVG whose
first plot has a path (or an inlined GIF or PNG: heat's animation), with a
caption. Prints what is wrong and exits 1.
"""
import argparse
import os
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []  # nodes and text, in document order

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def find(self, tag):
        return [n for n in self.walk() if n.tag == tag]

    def all_text(self):
        return "".join(c if isinstance(c, str) else c.all_text() for c in self.children)


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.node = Node("#root", [], None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.node)
        self.node.children.append(n)
        if tag not in VOID:
            self.node = n

    def handle_startendtag(self, tag, attrs):
        self.node.children.append(Node(tag, attrs, self.node))

    def handle_endtag(self, tag):
        n = self.node
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.node = n.parent

    def handle_data(self, data):
        self.node.children.append(data)


def figure_problem(i, fig):
    caption = " ".join(c.all_text().strip() for c in fig.find("figcaption")) or "?"
    svgs = fig.find("svg")
    if not svgs:
        # an inlined raster image (heat's animation, a GIF) is a figure too
        imgs = [m for m in fig.find("img") if re.match(r"data:image/(gif|png);base64,.{100}", m.attrs.get("src") or "")]
        if imgs and caption != "?":
            return None
        return "figure %d (%s) is neither an inline SVG nor an inlined image" % (i, caption)
    plots = [g for g in svgs[0].find("g") if g.attrs.get("id", "").endswith("gnuplot_plot_1")]
    if not any(p.attrs.get("d") for g in plots for p in g.find("path")):
        return "figure %d (%s) draws no plot" % (i, caption)
    if caption == "?":
        return "figure %d has no caption" % i
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("dom")
    ap.add_argument("log")
    ap.add_argument("--title")
    ap.add_argument("--tables", type=int)
    ap.add_argument("--figures", type=int)
    ap.add_argument("--trends", type=int)
    ap.add_argument("--links", type=int)
    ap.add_argument("--rows", action="append", default=[])
    ap.add_argument("--heading", action="append", default=[])
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--pre", action="append", default=[])
    ap.add_argument("--no-pre", action="append", default=[])
    a = ap.parse_args()

    problems = []
    console = [l.strip() for l in open(a.log, errors="replace") if "CONSOLE" in l]
    problems += ["console: " + l for l in console]
    tree = Tree()
    tree.feed(open(a.dom, errors="replace").read())
    root = tree.root
    if not root.find("body"):
        problems.append("no <body>: the page did not load")

    titles = [t.all_text() for head in root.find("head") for t in head.find("title")]
    if a.title is not None and titles != [a.title]:
        problems.append("title %r, expected %r" % (titles, a.title))
    if root.find("script"):
        problems.append("%d <script> elements" % len(root.find("script")))
    for img in root.find("img"):
        if not img.attrs.get("src", "").startswith("data:image/"):
            problems.append("an image not inlined: %s" % img.attrs.get("src"))
    for p in root.find("p"):
        if "missing" in p.attrs.get("class", ""):
            problems.append("a missing figure: " + p.all_text().strip())

    tables = root.find("table")
    if a.tables is not None and len(tables) != a.tables:
        problems.append("%d tables, expected %d" % (len(tables), a.tables))
    for spec in a.rows:
        index, want = (int(x) for x in spec.split(":"))
        rows = [r for b in tables[index].find("tbody") for r in b.find("tr")] if index < len(tables) else []
        if len(rows) != want:
            problems.append("table %d has %d rows, expected %d" % (index, len(rows), want))

    figures = root.find("figure")
    if a.figures is not None and len(figures) != a.figures:
        problems.append("%d figures, expected %d" % (len(figures), a.figures))
    problems += [p for p in (figure_problem(i + 1, f) for i, f in enumerate(figures)) if p]

    if a.trends is not None:
        trends = [td for td in root.find("td") if "trend" in td.attrs.get("class", "")
                  and any(s.find("polyline") for s in td.find("svg"))]
        if len(trends) != a.trends:
            problems.append("%d trend lines, expected %d" % (len(trends), a.trends))

    links = [x.attrs.get("href", "") for x in root.find("a")]
    for href in links:
        if re.match(r"^[a-z]+:", href):
            problems.append("a link out of the site: " + href)
        elif not os.path.exists(os.path.join(os.path.dirname(a.page), href)):
            problems.append("a link to a missing file: " + href)
    if a.links is not None and len(links) != a.links:
        problems.append("%d links, expected %d" % (len(links), a.links))

    headings = [h.all_text().strip() for t in ("h1", "h2", "h3") for h in root.find(t)]
    problems += ["no heading %r (headings: %s)" % (h, headings) for h in a.heading if h not in headings]
    text = root.all_text()
    problems += ["the page does not say %r" % t for t in a.text if t not in text]
    pres = [p.all_text() for p in root.find("pre")]
    problems += ["no <pre> holds %r" % t for t in a.pre if not any(t in p for p in pres)]
    problems += ["a <pre> holds %r" % t for t in a.no_pre if any(t in p for p in pres)]

    for p in problems:
        print("html_check: %s: %s" % (a.page, p))
    return 1 if problems else 0


sys.exit(main())
