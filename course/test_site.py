#!/usr/bin/env python3
"""test_site.py: the course site in a real browser (headless Chromium), page by page.

    course/test_site.py --site build/course [--build --binary build/scratchformer] [--shots DIR]

Chromium is driven through its DevTools protocol over a pipe (--remote-debugging-pipe: no port,
no extra package). Every page is loaded twice, from file:// and from a static server on
127.0.0.1, and must:
- log no console error, no uncaught exception, and no failed load (a missing image, script, style
  sheet or font shows as one);
- ask for nothing outside the site: every request goes to the site's own files (file:// or the
  local server), never to the network;
- have every image loaded, every link to a page of the site resolving (a #fragment to an element
  of that page), and no TeX left unrendered;
- on a lesson, switch language to the same lesson (the same number, and back again).
The attention explorer's cells must hold the weights the site exported (data-*.json), its role
table a row per head, its axes the tokens. Screenshots of the index, one lesson in each language
and the explorer are written to --shots. Exit 0: all held; 1: a check failed (each printed);
77: skipped (no Chromium).
"""
import argparse
import base64
import functools
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
                  "--disable-default-apps", "--mute-audio", "--remote-debugging-pipe"]


class Browser:
    """Chromium with one tab, spoken to in the DevTools protocol: JSON messages ending in a NUL
    byte, commands on fd 3 and answers and events on fd 4."""

    def __init__(self, chromium, profile):
        to_child, self.out = os.pipe()
        self.inp, from_child = os.pipe()

        def wire():  # in the child: its fd 3 reads our commands, its fd 4 writes back
            a, b = os.dup(to_child), os.dup(from_child)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([chromium] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile, "about:blank"],
                                     preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1366, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def read(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.inp], [], [], max(0.0, deadline - time.time()))
            if not ready:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        while True:
            m = self.read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(method + ": " + json.dumps(m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self.read(max(0.1, deadline - time.time())))

    def load(self, url):
        """Loads url; returns the events of the load (console, exceptions, log entries, requests)."""
        self.events = []
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")
        self.evaluate("new Promise(r => setTimeout(r, 50))")  # let the pages' scripts settle
        events, self.events = self.events, []
        return events

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      session=True)
        if "exceptionDetails" in r:
            raise RuntimeError("script failed: " + json.dumps(r["exceptionDetails"])[:500])
        return r["result"].get("value")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# What each page reports about itself once loaded.
PAGE_FACTS = r"""(() => {
  const bad = [];
  for (const img of document.images)
    if (!img.complete || img.naturalWidth === 0) bad.push('image not loaded: ' + img.getAttribute('src'));
  for (const m of document.querySelectorAll('span.math'))
    if (!m.querySelector('.katex') || m.querySelector('.katex-error')) bad.push('math not rendered: ' + m.textContent);
  // TeX left as text (outside code, where a formula may be quoted on purpose).
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const tex = /\$\$|\\\(|\\\[|\\(frac|sqrt|sum|mathrm|text|left|right|cdot|log|exp)\b|\$[^$\s][^$\n]*[^$\s\\]\$/;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('pre, code, script, style, .katex, textarea')) continue;
    if (tex.test(n.textContent)) bad.push('raw TeX: ' + n.textContent.trim().slice(0, 80));
  }
  const current = document.querySelector('nav.side li.current .num');
  const sw = document.getElementById('lang-switch');
  return {bad, links: [...document.querySelectorAll('a[href]')].map(a => a.href),
          sources: [...document.querySelectorAll('[src]')].map(e => e.src),
          math: document.querySelectorAll('span.math .katex').length,
          lang: document.documentElement.lang, number: current ? current.textContent : null,
          switch: sw ? sw.href : null, searchBox: !!document.getElementById('search')};
})()"""

EXPLORER_FACTS = r"""(() => {
  const cells = [...document.querySelectorAll('.cell')].map(c =>
      [+c.dataset.layer, +c.dataset.head, +c.dataset.q, +c.dataset.k, +c.dataset.w]);
  const rows = [...document.querySelectorAll('.ax-head')][0];
  const q = rows ? [...rows.querySelectorAll('.lab.q')].map(e => e.textContent) : [];
  const k = rows ? [...rows.querySelectorAll('.lab.k')].map(e => e.textContent) : [];
  const heads = document.querySelectorAll('.ax-head').length;
  const roles = document.querySelectorAll('#ax-roles tr').length - 1;
  document.getElementById('ax-view-lines').click();
  const svg = document.getElementById('ax-lines');
  const lines = svg.querySelectorAll('line').length, texts = svg.querySelectorAll('text').length;
  // Shown, and the maps not: what a person sees, not only what the script set.
  const shown = svg.getBoundingClientRect().height > 0 && document.getElementById('ax-heads').getBoundingClientRect().height === 0;
  document.getElementById('ax-view-grid').click();
  return {cells, q, k, heads, roles, lines, texts, shown};
})()"""

SEARCH_FACTS = r"""(() => {
  const box = document.getElementById('search');
  box.value = %s; box.dispatchEvent(new Event('input'));
  const hits = [...document.querySelectorAll('#results a')].map(a => a.href);
  box.value = ''; box.dispatchEvent(new Event('input'));
  return hits;
})()"""


def page_files(site):
    pages = []
    for folder, _, files in os.walk(site):
        for f in files:
            if f.endswith(".html"):
                pages.append(os.path.relpath(os.path.join(folder, f), site).replace(os.sep, "/"))
    return sorted(pages)


def ids_of(path, cache={}):
    if path not in cache:
        text = open(path, encoding="utf-8").read()
        cache[path] = set(re.findall(r'\bid="([^"]*)"', text))
    return cache[path]


class Checker:
    def __init__(self, site):
        self.site = os.path.abspath(site)
        self.failures = []

    def fail(self, page, what):
        self.failures.append(page + ": " + what)
        print("FAIL " + page + ": " + what)

    def local_path(self, url, base):
        """The site file a URL names (None: not the site's), and its fragment."""
        parsed = urllib.parse.urlparse(url)
        if not url.startswith(base):
            return None, None
        path = urllib.parse.unquote(parsed.path)
        rel = path[len(urllib.parse.urlparse(base).path):]
        return os.path.join(self.site, rel), urllib.parse.unquote(parsed.fragment)

    def check_events(self, page, events, base):
        for e in events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                self.fail(page, "console " + p["type"] + ": " + " ".join(str(a.get("value", a.get("description")))
                                                                       for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                self.fail(page, "exception: " + json.dumps(p.get("exceptionDetails", {}))[:300])
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                self.fail(page, "error: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not (url.startswith(base) or url.startswith("data:")):
                    self.fail(page, "a request outside the site: " + url)
            elif m == "Network.loadingFailed":
                self.fail(page, "failed to load: " + p.get("errorText", "") + " (" + p.get("type", "") + ")")

    def check_page(self, browser, page, base):
        events = browser.load(base + page)
        self.check_events(page, events, base)
        facts = browser.evaluate(PAGE_FACTS)
        for b in facts["bad"]:
            self.fail(page, b)
        if not facts["searchBox"]:
            self.fail(page, "no search box")
        for url in facts["links"] + facts["sources"]:
            path, frag = self.local_path(url, base)
            if path is None:
                if url.startswith("file:") or url.startswith("http://127.0.0.1"):
                    self.fail(page, "a link out of the site: " + url)
                continue
            if not os.path.isfile(path):
                self.fail(page, "a link to nothing: " + url)
            elif frag and path.endswith(".html") and frag not in ids_of(path):
                self.fail(page, "a link to a missing #" + frag + ": " + url)
        return facts


def build(args):
    cmd = [sys.executable, os.path.join(HERE, "build_site.py"), "--binary", args.binary, "--out", args.site, "--strict"]
    start = time.time()
    r = subprocess.run(cmd)
    if r.returncode != 0:
        print("test_site.py: building the site failed")
        sys.exit(1)
    print("test_site.py: site built in %.1f s" % (time.time() - start))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--site", required=True)
    p.add_argument("--build", action="store_true", help="build the site first (build_site.py)")
    p.add_argument("--binary")
    p.add_argument("--shots", help="the folder for the screenshots")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    args = p.parse_args()
    if not os.path.exists(args.chromium):
        print("skipped: no Chromium (scripts/setup.sh --with-browser installs Debian's chromium)")
        sys.exit(77)
    if args.build:
        if shutil.which("pandoc") is None or not os.path.isdir("/usr/share/javascript/katex"):
            print("skipped: no pandoc or KaTeX (scripts/setup.sh --with-course installs them)")
            sys.exit(77)
        build(args)
    start = time.time()
    checker = Checker(args.site)
    pages = page_files(checker.site)
    lessons = [p for p in pages if re.match(r"^en/[a-z_]+\.html$", p) and not p.startswith("en/explorer")]
    if not pages or not lessons:
        print("test_site.py: no pages in " + args.site)
        sys.exit(1)

    # A static server for the second pass (the site must work from one as from file://).
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=checker.site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    profile = tempfile.mkdtemp(prefix="sf_course_chromium_")
    browser = Browser(args.chromium, profile)
    try:
        file_base = "file://" + urllib.parse.quote(checker.site) + "/"
        http_base = "http://127.0.0.1:%d/" % server.server_address[1]
        facts = {}
        for base in (file_base, http_base):
            for page in pages:
                facts[(base, page)] = checker.check_page(browser, page, base)
        print("test_site.py: %d pages loaded from file:// and from %s" % (len(pages), http_base))
        formulas = sum(f["math"] for (base, _), f in facts.items() if base == file_base)
        if formulas == 0:
            checker.fail("site", "no formula drawn by KaTeX on any page (the front page has one)")
        print("test_site.py: %d formulas drawn by KaTeX" % formulas)

        # The language switch lands on the same lesson, and back.
        for page in pages:
            f = facts[(file_base, page)]
            if not (page.startswith("en/") or page.startswith("zh/")) or f["switch"] is None:
                continue
            other, _ = checker.local_path(f["switch"], file_base)
            other_page = os.path.relpath(other, checker.site) if other else None
            if other_page is None or (other_page, page) == (page, page):
                checker.fail(page, "the language switch goes nowhere: " + str(f["switch"]))
                continue
            if page in lessons or (page.startswith("zh/") and "en/" + page[3:] in lessons):
                want = ("zh/" if page.startswith("en/") else "en/") + page[3:]
                if other_page != want:
                    checker.fail(page, "the language switch lands on " + other_page + ", not " + want)
                elif facts[(file_base, want)]["number"] != f["number"] or f["number"] is None:
                    checker.fail(page, "lesson number %s, the other language's %s" % (f["number"], facts[(file_base, want)]["number"]))
                elif facts[(file_base, want)]["lang"] == f["lang"]:
                    checker.fail(page, "the other language's page is also lang=" + f["lang"])
        print("test_site.py: %d lessons switch language to the same lesson and back" % len(lessons))

        # The search box finds a lesson by a word of its text, in both languages.
        for page, word, expect in (("en/attention.html", "softmax", "attention.html"),
                                   ("zh/attention.html", "注意力", "attention.html")):
            browser.load(file_base + page)
            hits = browser.evaluate(SEARCH_FACTS % json.dumps(word))
            if not hits or not any(expect in h for h in hits):
                checker.fail(page, "searching for %s finds %d results, none in %s" % (word, len(hits or []), expect))

        # The explorer's cells hold the exported weights.
        for key in ("explorer", "explorer-reverse"):
            data = json.load(open(os.path.join(checker.site, "data-" + key + ".json"), encoding="utf-8"))
            for lang in ("en", "zh"):
                page = lang + "/" + key + ".html"
                browser.load(file_base + page)
                f = browser.evaluate(EXPLORER_FACTS)
                H, T, S = len(data["weights"][0]), len(data["labels"]), len(data["key_labels"])
                if len(f["cells"]) != H * T * S:
                    checker.fail(page, "%d cells, not %d heads x %d x %d" % (len(f["cells"]), H, T, S))
                mismatched = sum(1 for l, h, q, k, w in f["cells"] if abs(data["weights"][l][h][q][k] - w) > 1e-6)
                if mismatched:
                    checker.fail(page, "%d cells differ from the exported weights" % mismatched)
                if f["q"] != data["labels"] or f["k"] != data["key_labels"]:
                    checker.fail(page, "the axes do not carry the tokens")
                if f["heads"] != H or f["roles"] != len(data["weights"]) * H:
                    checker.fail(page, "%d head maps and %d role rows for %d layers x %d heads" %
                                 (f["heads"], f["roles"], len(data["weights"]), H))
                if not f["shown"] or f["lines"] == 0 or f["texts"] != T + S:
                    checker.fail(page, "the lines view: %d lines, %d tokens" % (f["lines"], f["texts"]))
                print("test_site.py: %s: %d cells hold the exported weights, %d lines" % (page, len(f["cells"]), f["lines"]))

        if args.shots:
            os.makedirs(args.shots, exist_ok=True)
            for page, name in (("index.html", "index"), ("en/attention.html", "lesson_en"),
                               ("zh/attention.html", "lesson_zh"), ("en/explorer.html", "explorer"),
                               ("zh/explorer-reverse.html", "explorer_reverse_zh")):
                browser.load(file_base + page)
                browser.screenshot(os.path.join(args.shots, "course_" + name + ".png"))
            browser.load(file_base + "en/explorer.html")  # the lines view, layer 1
            browser.evaluate("document.querySelectorAll('#ax-layers button')[1].click();"
                             "document.getElementById('ax-view-lines').click()")
            browser.screenshot(os.path.join(args.shots, "course_explorer_lines.png"))
            print("test_site.py: screenshots in " + args.shots)
    finally:
        browser.close()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    print("test_site.py: checked in %.1f s" % (time.time() - start))
    if checker.failures:
        print("test_site.py: %d failures" % len(checker.failures))
        sys.exit(1)
    print("test_site.py: all pages passed")


if __name__ == "__main__":
    main()
