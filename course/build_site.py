#!/usr/bin/env python3
"""build_site.py: the course as a static site, every lesson in English and Chinese.

    course/build_site.py [--binary build/scratchformer] [--out build/course]
                         [--run RUN_DIR] [--reverse-run RUN_DIR]

(`./run.sh course` builds the binary and runs this.) What it does:

- reads the lessons' order, titles and exercises from the registry (`scratchformer lesson
  --json`), so the site follows lessons/course.cpp;
- turns each lessons/NAME.md and lessons/zh/NAME.md into a page with pandoc (Debian's pandoc:
  GitHub Markdown, its own code highlighter, TeX math marked for KaTeX), adds the lesson's
  exercises (the stub, its hints folded, the command that checks it), and rewrites links: a
  lesson's text to its page, images/ to the site's copy, a source file to a highlighted copy;
- copies Debian's KaTeX (libjs-katex: script, style sheet and fonts) into the site, so math
  renders offline;
- writes an index of every section for the search box (search.js, read as a script, so it works
  from file:// where a page may not fetch files);
- writes the attention explorer: `scratchformer inspect` on the default GPT and on the reverse
  encoder-decoder (trained here on a short budget unless run folders are given).

The pages load nothing from the network: every script, style sheet, font and image is in the
site, and course/test_site.py checks that in headless Chromium.
"""
import argparse
import concurrent.futures
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KATEX = "/usr/share/javascript/katex"  # Debian's libjs-katex

WORDS = {
    "en": {"course": "scratchformer: the course", "lessons": "Lessons", "lesson": "Lesson",
           "switch": "中文", "search": "Search the lessons", "prev": "Previous", "next": "Next",
           "contents": "On this page", "exercise": "Exercise", "hint": "Hint", "check": "Check it",
           "stub": "The stub to fill in", "files": "The exercise files", "explorer": "Attention explorer",
           "explorer_default": "the default GPT", "explorer_reverse": "the reverse model's cross-attention",
           "glossary": "Glossary", "source": "Source", "home": "Contents"},
    "zh": {"course": "scratchformer 课程", "lessons": "课程", "lesson": "第", "switch": "English",
           "search": "搜索课程", "prev": "上一课", "next": "下一课", "contents": "本页内容", "exercise": "练习",
           "hint": "提示", "check": "检查", "stub": "要填写的函数", "files": "练习文件",
           "explorer": "注意力浏览器", "explorer_default": "默认 GPT", "explorer_reverse": "反转模型的交叉注意力",
           "glossary": "术语表", "source": "源代码", "home": "目录"},
}

INTRO = {
    "en": "A transformer built from scratch in C++, taken apart one module at a time. Each lesson is "
          "a program that prints what happens inside; its text explains the idea with those numbers. "
          "Read them in order: each builds on the ones before. The exercises ask you to write the "
          "pieces yourself, and a checker compares your code with the framework's.",
    "zh": "用 C++ 从零实现的 transformer，一次拆开一个模块。每一课都是一个程序，打印出内部发生了什么；"
          "课文用这些数字讲解其中的道理。请按顺序阅读，每一课都建立在前面几课之上。练习让你亲手写出这些部件，"
          "检查器把你的代码和框架自己的实现逐一比较。",
}

# The formula on the front page (drawn by KaTeX, as the lessons' TeX is).
ATTENTION_TEX = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"
FORMULA = {
    "en": "At the heart of it is one formula, which the lesson %s computes by hand:",
    "zh": "这一切的核心是下面这个公式，%s 一课会手算它：",
}

EXPLORER_NOTE = {
    "en": "A trained model's attention, every layer and head, with the measured role of each head.",
    "zh": "训练好的模型的注意力：每一层、每一个头，以及测得的每个头的分工。",
}


def fail(message):
    print("build_site.py: " + message, file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout
    except FileNotFoundError:
        fail("cannot run " + cmd[0] + " (scripts/setup.sh --with-course installs pandoc)")
    except subprocess.CalledProcessError as e:
        fail(" ".join(cmd) + " failed:\n" + e.stderr + e.stdout)


def rel(target, page):
    """The link from the page at site path `page` to the site path `target`."""
    return os.path.relpath(target, os.path.dirname(page) or ".").replace(os.sep, "/")


class Site:
    def __init__(self, args):
        self.out = args.out
        self.binary = args.binary
        registry = json.loads(run([self.binary, "lesson", "--json"]))
        self.lessons = registry["lessons"]
        self.by_file = {l["file"]: l for l in self.lessons}
        self.parts = self.group_parts()
        self.highlight_css = ""
        self.sources = {}  # repo path -> site path of its highlighted copy
        self.search = []
        self.pending_sources = []
        self.files = set()  # repo paths of other images the pages show
        self.broken = []  # links in the lessons to files that do not exist

    def group_parts(self):
        """[(title_en, title_zh, about {lang: line}, [lessons])]: the registry's parts (each lesson's
        "part": {"title", "title_zh", "about", "about_zh"}), or one part when it has none."""
        parts = []
        for l in self.lessons:
            part = l.get("part") or {"title": "Lessons", "title_zh": "课程"}
            key = (part.get("title", ""), part.get("title_zh", part.get("title", "")))
            if "number" in part:
                key = ("Part %d · %s" % (part["number"], key[0]), "第 %d 部分 · %s" % (part["number"], key[1]))
            if not parts or parts[-1][0:2] != key:
                parts.append((key[0], key[1], {"en": part.get("about", ""), "zh": part.get("about_zh", "")}, []))
            parts[-1][3].append(l)
        return parts

    # ---- paths ----
    def lesson_page(self, lang, lesson):
        return lang + "/" + lesson["file"] + ".html"

    def home(self, lang):
        return "index.html" if lang == "en" else "zh/index.html"

    def map_link(self, attr, url, md_path, page, follow):
        """A link in the Markdown file md_path (repo-relative) rewritten for the site page `page`;
        None when it points at a file the site does not carry (the link becomes text)."""
        if re.match(r"^[a-z]+:", url) or url.startswith("#") or not url:
            return url
        path, _, frag = url.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(md_path), path))
        if os.path.isfile(os.path.join(ROOT, target, "README.md")):
            target = os.path.join(target, "README.md")  # a folder: its README
        frag = "#" + frag if frag else ""
        stem, ext = os.path.splitext(os.path.basename(target))
        folder = os.path.dirname(target)
        if ext == ".md" and folder in ("lessons", "lessons/zh"):
            lang = "zh" if folder == "lessons/zh" else "en"
            if stem in self.by_file:
                return rel(self.lesson_page(lang, self.by_file[stem]), page) + frag
            if stem == "README":
                return rel(self.home(lang), page) + frag
            if stem == "glossary" and lang == "zh":
                return rel("zh/glossary.html", page) + frag
        if folder == "lessons/images":
            return rel("images/" + os.path.basename(target), page)
        if not os.path.isfile(os.path.join(ROOT, target)):
            if follow:  # a broken link in a lesson: text in the page, and said (fatal with --strict)
                self.broken.append(md_path + ": link to " + url + ": " + target + " does not exist")
            return None
        if attr == "src":  # an image outside lessons/images: a copy
            self.files.add(target)
            return rel("files/" + target, page)
        if target not in self.sources:
            if not follow:
                return None
            self.sources[target] = "src/" + target + ".html"
            self.pending_sources.append(target)
        return rel(self.sources[target], page) + frag

    def rewrite_links(self, body, md_path, page, follow=True):
        def fix(m):
            new = self.map_link(m.group(1), html.unescape(m.group(2)), md_path, page, follow)
            if new is None:
                return m.group(1) + '="#"' + ' data-repo-file="' + m.group(2) + '"'
            return m.group(1) + '="' + html.escape(new, quote=True) + '"'

        body = re.sub(r'\b(href|src)="([^"]*)"', fix, body)
        # A link to a file the site does not carry becomes its text.
        return re.sub(r'<a href="#" data-repo-file="([^"]*)">(.*?)</a>', r'<span title="\1">\2</span>', body)

    # ---- pandoc ----
    def pandoc(self, markdown, toc):
        template = os.path.join(HERE, "pandoc_fragment.html")
        cmd = ["pandoc", "-f", "gfm+tex_math_dollars", "-t", "html5", "--katex", "--standalone",
               "--template", template, "--highlight-style", "pygments", "--metadata", "pagetitle=x"]
        if toc:
            cmd += ["--toc", "--toc-depth=2"]
        out = run(cmd, input=markdown)
        css, _, rest = out.partition("<!--END-CSS-->")
        if not self.highlight_css:
            self.highlight_css = css.strip()
        toc_html, _, body = rest.partition("<!--END-TOC-->")
        return toc_html.strip(), body

    # ---- pages ----
    def nav(self, lang, page, current):
        w = WORDS[lang]
        items = []
        for title_en, title_zh, _, lessons in self.parts:
            items.append('<li class="part">' + html.escape(title_zh if lang == "zh" else title_en) + "</li>")
            for l in lessons:
                cls = ' class="current"' if current == l["file"] else ""
                title = l["title_zh"] if lang == "zh" else l["title"]
                items.append('<li%s><a href="%s"><span class="num">%d</span> %s</a></li>' %
                             (cls, rel(self.lesson_page(lang, l), page), l["number"], html.escape(title)))
        items.append('<li class="part">' + w["explorer"] + "</li>")
        for key, label in (("explorer", w["explorer_default"]), ("explorer-reverse", w["explorer_reverse"])):
            cls = ' class="current"' if current == key else ""
            items.append('<li%s><a href="%s">%s</a></li>' % (cls, rel(lang + "/" + key + ".html", page), label))
        if os.path.isfile(os.path.join(ROOT, "lessons/zh/glossary.md")):
            cls = ' class="current"' if current == "glossary" else ""
            items.append('<li%s><a href="%s">%s</a></li>' % (cls, rel("zh/glossary.html", page), w["glossary"]))
        return '<ul class="nav">' + "\n".join(items) + "</ul>"

    def shell(self, lang, page, title, current, other, main, toc="", wide=False):
        """The frame every page shares: header (home, search, language switch), the lessons down
        the side, the page's own contents on the right."""
        w = WORDS[lang]
        root = rel(".", page) if os.path.dirname(page) else ""
        root = "" if root in ("", ".") else root + "/"
        toc_block = ('<aside class="toc"><div class="toc-title">%s</div>%s</aside>' % (w["contents"], toc)) if toc else ""
        return f"""<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · {w['course']}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{root}katex/katex.min.css">
<link rel="stylesheet" href="{root}site.css">
</head>
<body data-root="{root}" data-lang="{lang}">
<header class="top">
<a class="brand" href="{rel(self.home(lang), page)}">{w['course']}</a>
<div class="search"><input id="search" type="search" placeholder="{w['search']}" autocomplete="off" aria-label="{w['search']}"><ol id="results" hidden></ol></div>
<a class="lang-switch" id="lang-switch" href="{other}" hreflang="{'en' if lang == 'zh' else 'zh'}">{w['switch']}</a>
</header>
<div class="layout{' wide' if wide else ''}">
<nav class="side">{self.nav(lang, page, current)}</nav>
<main id="main">
{main}
</main>
{toc_block}
</div>
<script src="{root}katex/katex.min.js"></script>
<script src="{root}search.js"></script>
<script src="{root}site.js"></script>
</body></html>
"""

    def exercises_markdown(self, lang, lesson, up):
        """The lesson's exercises: the task (the stub's comment; on a Chinese page its Chinese text,
        exercises/zh/NN_name.md), each hint folded, the stub, and the command that checks it."""
        w = WORDS[lang]
        if not lesson["exercises"]:
            return ""
        md = ["", "## " + w["files"], ""]
        for e in lesson["exercises"]:
            path = "exercises/" + e["file"] + ".cpp"
            text = open(os.path.join(ROOT, path), encoding="utf-8").read()
            lines = text.split("\n")
            comment = []
            while lines and lines[0].startswith("//"):
                comment.append(lines.pop(0)[3:] if lines[0].startswith("// ") else lines.pop(0)[2:])
            code = "\n".join(lines).strip("\n")
            task, hints, current = [], [], None
            for line in comment[1:]:
                m = re.match(r"^\s*(hint(?: \d+)?):\s*(.*)$", line)
                if m:
                    current = [m.group(2)]
                    hints.append((m.group(1), current))
                elif (current is not None and line.startswith("  ") and line.strip()
                      and not re.match(r"^\s*[A-Za-z][\w ]*:\s", line)):  # not the next "field:"
                    current.append(line.strip())
                elif re.match(r"^\s*Check it:", line) or "exercises/zh/" in line:  # or the pointer to the Chinese
                    current = None
                else:
                    current = None
                    task.append(line)
            number = e["number"]
            title = e["title_zh"] if lang == "zh" else e["title"]
            md += ["### %s %d: %s" % (w["exercise"], number, title), ""]
            zh_task = os.path.join(ROOT, "exercises", "zh", e["file"] + ".md")
            if lang == "zh" and os.path.isfile(zh_task):
                # The task in Chinese (exercises/zh/NN_name.md, the same text as the stub's comment):
                # its heading line as the lead, its body as Markdown, without the closing "检查："
                # line (the page's own check block follows).
                zh_lines = open(zh_task, encoding="utf-8").read().strip("\n").split("\n")
                lead = zh_lines.pop(0)[2:] if zh_lines and zh_lines[0].startswith("# ") else ""
                body = [l for l in zh_lines if not l.startswith("检查：")]
                md += [lead, "", "\n".join(body).strip("\n"), ""]
            else:
                md += [comment[0] if comment else "", "", "```text", "\n".join(task).strip("\n"), "```", ""]
            for i, (label, body) in enumerate(hints):
                summary = w["hint"] + (" %d" % (i + 1) if len(hints) > 1 else "")
                md += ["<details><summary>" + summary + "</summary>", "", "```text", "\n".join(body), "```", "",
                       "</details>", ""]
            md += ["%s ([%s](%s%s)):" % (w["stub"], path, up, path), "", "```cpp", code, "```", "",
                   "%s:" % w["check"], "", "```sh", "./run.sh exercise %d" % number, "```", ""]
        return "\n".join(md)

    def index_sections(self, lang, page, title, body):
        """The page's text by section (h2/h3 with an id), for the search box."""
        sections = []
        pieces = re.split(r'(<h[1-3][^>]*id="[^"]*"[^>]*>.*?</h[1-3]>)', body, flags=re.S)
        heading, anchor = title, ""
        for piece in pieces:
            m = re.match(r'<h[1-3][^>]*id="([^"]*)"[^>]*>(.*?)</h[1-3]>', piece, flags=re.S)
            if m:
                anchor, heading = m.group(1), html.unescape(re.sub(r"<[^>]+>", "", m.group(2))).strip()
                continue
            text = html.unescape(re.sub(r"<[^>]+>", " ", piece))
            text = re.sub(r"\s+", " ", text).strip()
            if text or heading:
                sections.append({"h": heading, "a": anchor, "t": text[:4000]})
        self.search.append({"lang": lang, "url": page, "title": title, "s": sections})

    def lesson(self, lang, lesson, index):
        md_path = ("lessons/zh/" if lang == "zh" else "lessons/") + lesson["file"] + ".md"
        source = os.path.join(ROOT, md_path)
        if not os.path.isfile(source):
            fail("lesson " + lesson["name"] + " has no text " + md_path)
        markdown = open(source, encoding="utf-8").read()
        # The exercise files' links are written relative to the lesson's folder.
        markdown += self.exercises_markdown(lang, lesson, "../../" if lang == "zh" else "../")
        toc, body = self.pandoc(markdown, toc=True)
        page = self.lesson_page(lang, lesson)
        body = self.rewrite_links(body, md_path, page)
        toc = self.rewrite_links(toc, md_path, page)
        other_lang = "en" if lang == "zh" else "zh"
        w = WORDS[lang]
        pager = ['<nav class="pager">']
        if index > 0:
            p = self.lessons[index - 1]
            pager.append('<a class="prev" href="%s">← %s: %s</a>' % (rel(self.lesson_page(lang, p), page), w["prev"],
                         html.escape(p["title_zh"] if lang == "zh" else p["title"])))
        if index + 1 < len(self.lessons):
            n = self.lessons[index + 1]
            pager.append('<a class="next" href="%s">%s: %s →</a>' % (rel(self.lesson_page(lang, n), page), w["next"],
                         html.escape(n["title_zh"] if lang == "zh" else n["title"])))
        pager.append("</nav>")
        m = re.search(r"<h1[^>]*>(.*?)</h1>", body, flags=re.S)
        title = html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip() if m else lesson["title"]
        self.index_sections(lang, page, title, body)
        other = rel(self.lesson_page(other_lang, lesson), page)
        self.write(page, self.shell(lang, page, title, lesson["file"], other, body + "\n".join(pager), toc))

    def home_page(self, lang):
        w = WORDS[lang]
        page = self.home(lang)
        rows = ["<h1>" + w["course"] + "</h1>", "<p>" + INTRO[lang] + "</p>"]
        attention = next((l for l in self.lessons if l["name"] == "attention"), None)
        if attention:
            link = '<a href="%s">%s</a>' % (rel(self.lesson_page(lang, attention), page),
                                            html.escape(attention["title_zh"] if lang == "zh" else attention["title"]))
            rows.append("<p>" + FORMULA[lang] % link + "</p>")
            rows.append('<p><span class="math display">' + html.escape(ATTENTION_TEX) + "</span></p>")
        for title_en, title_zh, about, lessons in self.parts:
            rows.append("<h2>" + html.escape(title_zh if lang == "zh" else title_en) + "</h2>")
            if about[lang]:
                rows.append("<p>" + html.escape(about[lang]) + "</p>")
            rows.append('<ol class="lesson-list">')
            for l in lessons:
                title = l["title_zh"] if lang == "zh" else l["title"]
                extra = ""
                if l["exercises"]:
                    label = w["exercise"] + ("s" if lang == "en" and len(l["exercises"]) > 1 else "")
                    extra = ' <span class="badge">%s %s</span>' % (
                        label, ", ".join(str(e["number"]) for e in l["exercises"]))
                rows.append('<li value="%d"><a href="%s">%s</a>%s</li>' % (
                    l["number"], rel(self.lesson_page(lang, l), page), html.escape(title), extra))
            rows.append("</ol>")
        rows.append("<h2>" + w["explorer"] + "</h2><p>" + EXPLORER_NOTE[lang] + "</p><ul>")
        for key, label in (("explorer", w["explorer_default"]), ("explorer-reverse", w["explorer_reverse"])):
            rows.append('<li><a href="%s">%s</a></li>' % (rel(lang + "/" + key + ".html", page), label))
        rows.append("</ul>")
        other = rel(self.home("zh" if lang == "en" else "en"), page)
        self.write(page, self.shell(lang, page, w["course"], "home", other, "\n".join(rows)))

    def glossary(self):
        md_path = "lessons/zh/glossary.md"
        if not os.path.isfile(os.path.join(ROOT, md_path)):
            return
        toc, body = self.pandoc(open(os.path.join(ROOT, md_path), encoding="utf-8").read(), toc=False)
        page = "zh/glossary.html"
        body = self.rewrite_links(body, md_path, page)
        self.index_sections("zh", page, WORDS["zh"]["glossary"], body)
        self.write(page, self.shell("zh", page, WORDS["zh"]["glossary"], "glossary", rel(self.home("en"), page), body))

    def source_pages(self, pool):
        """A highlighted copy of each source file a lesson links to (its links become text)."""
        for job in [pool.submit(self.source_page, path) for path in sorted(set(self.pending_sources))]:
            job.result()

    def source_page(self, path):
        languages = {".cpp": "cpp", ".h": "cpp", ".py": "python", ".json": "json", ".sh": "bash", ".cmake": "cmake"}
        page = self.sources[path]
        text = open(os.path.join(ROOT, path), encoding="utf-8").read()
        ext = os.path.splitext(path)[1]
        if ext == ".md":
            _, body = self.pandoc(text, toc=False)
            body = self.rewrite_links(body, path, page, follow=False)
        else:
            fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
            _, body = self.pandoc("# " + path + "\n\n" + fence + languages.get(ext, "text") + "\n" + text + "\n" + fence + "\n",
                                  toc=False)
        lang = "zh" if "/zh/" in path or path.endswith(".zh.md") else "en"
        self.write(page, self.shell(lang, page, path, "", rel(self.home("zh" if lang == "en" else "en"), page), body))

    # ---- the attention explorer ----
    def explorer(self, args, work):
        pages = {}
        default_run = args.run or self.train(work, "default", "configs/default.json", args.steps,
                                             ["--set", "train.eval_interval=%d" % args.steps, "--set", "train.eval_iters=2",
                                              "--set", "schedule.warmup_steps=%d" % max(1, args.steps // 10)])
        reverse_run = args.reverse_run or self.train(work, "reverse", "configs/reverse.json", 300,
                                                     ["--set", "train.eval_interval=300", "--set", "schedule.warmup_steps=30"])
        for key, run_dir, extra in (("explorer", default_run, ["--prompt", args.prompt]),
                                    ("explorer-reverse", reverse_run, [])):
            out = os.path.join(work, "inspect-" + key)
            run([self.binary, "inspect", run_dir, "--quiet", "--out", out] + extra)
            pages[key] = open(os.path.join(out, "attention.html"), encoding="utf-8").read()
            shutil.copy(os.path.join(out, "attention.json"), os.path.join(self.out, "data-" + key + ".json"))
        # The pages' titles say which model, and nothing of where this machine keeps it.
        trained = not args.run
        titles = {
            "explorer": {
                "en": ('The default GPT (configs/default.json, trained %d steps)' % args.steps if trained
                       else os.path.basename(os.path.normpath(default_run))) + ' reading "%s"' % args.prompt,
                "zh": ('默认 GPT（configs/default.json，训练 %d 步）' % args.steps if trained
                       else os.path.basename(os.path.normpath(default_run))) + '读“%s”' % args.prompt},
            "explorer-reverse": {
                "en": ('The reverse model (configs/reverse.json, trained 300 steps)' if not args.reverse_run
                       else os.path.basename(os.path.normpath(reverse_run))) + ": cross-attention on a held-out example",
                "zh": ('反转模型（configs/reverse.json，训练 300 步）' if not args.reverse_run
                       else os.path.basename(os.path.normpath(reverse_run))) + "：一个留出样例上的交叉注意力"},
        }
        for lang in ("en", "zh"):
            for key, text in pages.items():
                page = lang + "/" + key + ".html"
                # inspect's page, whole, inside the site's frame: its style, data and script.
                style = re.search(r"<style>(.*?)</style>", text, flags=re.S).group(1)
                body = re.search(r"<body>(.*)</body>", text, flags=re.S).group(1)
                other = rel(("zh" if lang == "en" else "en") + "/" + key + ".html", page)
                body = re.sub(r"(getElementById\('ax-title'\)\.textContent = )\"(?:[^\"\\]|\\.)*\"",
                              lambda m: m.group(1) + json.dumps(titles[key][lang], ensure_ascii=False).replace("</", "<\\/"), body)
                shell = self.shell(lang, page, WORDS[lang]["explorer"], key, other,
                                   '<div class="explorer">' + body + "</div>", wide=True)
                shell = shell.replace("</head>", "<style>" + style + "</style>\n</head>", 1)
                self.write(page, shell)

    def train(self, work, name, config, steps, extra):
        run_dir = os.path.join(work, "run-" + name)
        stamp = os.path.join(run_dir, "site-steps")
        if os.path.isfile(stamp) and open(stamp).read().strip() == str(steps):
            return run_dir  # trained by an earlier build with this budget
        start = time.time()
        run([self.binary, "train", os.path.join(ROOT, config), "--set", "output.run_dir=" + run_dir,
             "--set", "output.overwrite=true", "--set", "train.steps=%d" % steps, "--set", "train.samples=0"] + extra)
        open(stamp, "w").write(str(steps) + "\n")
        print("build_site.py: trained %s for %d steps in %.0f s" % (config, steps, time.time() - start))
        return run_dir

    # ---- output ----
    def write(self, page, text):
        path = os.path.join(self.out, page)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def assets(self):
        shutil.copytree(os.path.join(ROOT, "lessons/images"), os.path.join(self.out, "images"), dirs_exist_ok=True)
        for path in self.files:
            os.makedirs(os.path.dirname(os.path.join(self.out, "files", path)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, path), os.path.join(self.out, "files", path))
        katex = os.path.join(self.out, "katex")
        os.makedirs(katex, exist_ok=True)
        for f in ("katex.min.js", "katex.min.css"):
            if not os.path.isfile(os.path.join(KATEX, f)):
                fail("no " + os.path.join(KATEX, f) + " (scripts/setup.sh --with-course installs libjs-katex)")
            shutil.copy(os.path.join(KATEX, f), katex)
        shutil.copytree(os.path.join(KATEX, "fonts"), os.path.join(katex, "fonts"), dirs_exist_ok=True)
        css = open(os.path.join(HERE, "site.css"), encoding="utf-8").read()
        self.write("site.css", css + "\n/* code highlighting: pandoc's pygments style */\n" + self.highlight_css + "\n")
        shutil.copy(os.path.join(HERE, "site.js"), os.path.join(self.out, "site.js"))
        index = json.dumps(self.search, ensure_ascii=False, separators=(",", ":"))
        self.write("search.js", "// Every section of every page, for the search box (site.js).\nconst SEARCH_INDEX = " +
                   index.replace("</", "<\\/") + ";\n")


def main():
    p = argparse.ArgumentParser(description="Build the course site (static HTML) from the lessons.")
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "scratchformer"))
    p.add_argument("--out", default=os.path.join(ROOT, "build", "course"))
    p.add_argument("--run", help="the run folder of a trained GPT for the attention explorer (default: train one)")
    p.add_argument("--reverse-run", help="the run folder of a trained reverse encoder-decoder (default: train one)")
    p.add_argument("--steps", type=int, default=400, help="steps of the default GPT trained for the explorer")
    p.add_argument("--prompt", default="ROMEO: What say you? JULIET: I say")
    p.add_argument("--strict", action="store_true", help="a broken link in a lesson is an error (the test's build)")
    args = p.parse_args()
    if not os.path.isfile(args.binary):
        fail("no " + args.binary + " (build it: cmake --build build --target scratchformer)")
    start = time.time()
    site = Site(args)
    work = os.path.join(os.path.dirname(os.path.abspath(args.out)), "course-work")
    os.makedirs(work, exist_ok=True)
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    # pandoc runs as a process per page: as many at once as there are cores.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        jobs = [pool.submit(site.lesson, lang, lesson, i) for lang in ("en", "zh") for i, lesson in enumerate(site.lessons)]
        jobs += [pool.submit(site.home_page, lang) for lang in ("en", "zh")] + [pool.submit(site.glossary)]
        for job in jobs:
            job.result()
        site.source_pages(pool)
    site.search.sort(key=lambda page: (page["lang"], page["url"]))
    for line in sorted(set(site.broken)):
        print("build_site.py: " + ("" if args.strict else "warning: ") + line, file=sys.stderr)
    if site.broken and args.strict:
        fail("%d broken links in the lessons (--strict)" % len(set(site.broken)))
    site.explorer(args, work)
    site.assets()
    print("build_site.py: wrote %s (%d lessons in 2 languages) in %.0f s; open %s" %
          (args.out, len(site.lessons), time.time() - start, os.path.join(os.path.abspath(args.out), "index.html")))


if __name__ == "__main__":
    main()
