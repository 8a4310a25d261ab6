"""Parses an iapguard HTML page with Python's html.parser and prints a JSON verdict on stdout.

Checks: only the expected tags and attributes occur; no event-handler attributes; exactly one <script>
whose text is given in argv[2] (a file); hrefs are fragments, the report's own relative files, or
http(s) links; the CSP meta tag is present; non-void elements are balanced.
"""
import json
import sys
from html.parser import HTMLParser

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "script", "body", "header", "nav", "ul", "li", "a", "main",
    "section", "h1", "h2", "h3", "p", "span", "strong", "bdi", "table", "caption", "thead", "tbody", "tr",
    "th", "td", "details", "summary", "div", "svg", "rect", "line", "text", "g", "noscript", "footer", "code",
}
ALLOWED_ATTRS = {
    "lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "rel", "scope", "colspan",
    "data-sort", "data-type", "role", "aria-labelledby", "aria-label", "viewbox", "x", "y", "width", "height",
    "x1", "y1", "x2", "y2", "text-anchor", "data-case", "data-level", "data-status", "data-rules",
    "open",
}
VOID = {"meta", "br", "img", "input", "link", "hr"}
OWN_FILES = {"findings.csv", "evidence.csv", "summary.json", "cases.csv", "../index.html"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.errors = []
        self.stack = []
        self.scripts = []
        self.in_script = False
        self.tags = {}
        self.csp = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag not in ALLOWED_TAGS:
            self.errors.append("unexpected tag <%s>" % tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.errors.append("event handler attribute %s on <%s>" % (name, tag))
            if name not in ALLOWED_ATTRS:
                self.errors.append("unexpected attribute %s on <%s>" % (name, tag))
            if name == "href":
                ok = (value.startswith("#") or value in OWN_FILES or value.startswith("https://")
                      or value.startswith("http://")
                      or (value.split("/")[0].isdigit() and value.split("/", 1)[1] in ("report.html", "findings.csv")))
                if not ok:
                    self.errors.append("unexpected href %r" % value)
        if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy":
            self.csp = dict(attrs).get("content")
        if tag == "script":
            self.in_script = True
            self.scripts.append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unbalanced </%s> (open: %s)" % (tag, "/".join(self.stack[-4:])))
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
        else:
            self.stack.pop()

    def handle_data(self, data):
        if self.in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


def main():
    html = open(sys.argv[1], encoding="utf-8").read()
    expected_script = open(sys.argv[2], encoding="utf-8").read() if len(sys.argv) > 2 else None
    checker = Checker()
    checker.feed(html)
    checker.close()
    if checker.stack:
        checker.errors.append("unclosed: " + "/".join(checker.stack))
    if expected_script is not None:
        for s in checker.scripts:
            if s != expected_script:
                checker.errors.append("a script differs from ours (%d chars)" % len(s))
    print(json.dumps({
        "errors": checker.errors[:50],
        "scripts": len(checker.scripts),
        "tags": checker.tags,
        "csp": checker.csp,
        "text": "".join(checker.text),
    }))


main()
