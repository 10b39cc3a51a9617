"""The workbench's JavaScript (research-ui/js/) stays easy to find one's way in, enforced: folders by screen
(docs/architecture.md), few files in each, no long file or function, and every import points at a file. Its
stylesheets (research-ui/css/) too: none over MAX_FILE_LINES lines, each linked once by index.html.

The functions are found without a JavaScript parser (none is installed, and the browser tests need none):
comments, strings, template text and regular expressions are blanked first, so the braces left are the code's.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "research-ui" / "js"
CSS_DIR = ROOT / "research-ui" / "css"
MAX_FILES_AT_TOP = 12
MAX_FILES_PER_FOLDER = 15
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 100

# after one of these a `/` starts a regular expression, not a division
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
_REGEX_WORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw"}
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "with"}
_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}/[^"']+)\1""")


def scripts() -> list[Path]:
    return sorted(JS_DIR.rglob("*.js"))


def _blank(text: str) -> str:
    """The text with every character of a comment, string, template text or regex replaced by a space
    (newlines kept, so line numbers stay right). A template's ${…} stays code."""
    out = list(text)
    templates: list[int] = []  # brace depth inside each open ${…}
    prev, word, i, n = "", "", 0, len(text)

    def wipe(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    def template_text(start: int) -> int:
        """From inside a template literal to just after its closing backtick or its next `${`."""
        k = start
        while k < n and text[k] != "`" and not text.startswith("${", k):
            k += 2 if text[k] == "\\" else 1
        wipe(start, k)
        if text.startswith("${", k):
            templates.append(0)
            return k + 2
        return k + 1

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.index("*/", i + 2) + 2
        elif c in "'\"":
            end = i + 1
            while text[end] != c:
                end += 2 if text[end] == "\\" else 1
            end += 1
        elif c == "/" and (prev in _REGEX_AFTER or word in _REGEX_WORDS):
            end, in_class = i + 1, False
            while in_class or text[end] != "/":
                in_class = (in_class or text[end] == "[") and text[end] != "]"
                end += 2 if text[end] == "\\" else 1
            end += 1
            while end < n and text[end].isalpha():
                end += 1
        elif c == "`":
            i = template_text(i + 1)
            prev, word = "`", ""
            continue
        elif c == "}" and templates and templates[-1] == 0:
            templates.pop()
            i = template_text(i + 1)
            prev, word = "`", ""
            continue
        else:
            if templates and c in "{}":
                templates[-1] += 1 if c == "{" else -1
            if not c.isspace():
                word = word + c if (c.isalnum() or c in "_$") and prev.isalnum() else c
                prev = c
            i += 1
            continue
        wipe(i, end)
        if not text.startswith(("//", "/*"), i):
            prev, word = "a", ""  # a string or a regex is a value: a `/` after it divides
        i = end
    return "".join(out)


def functions(text: str) -> list[tuple[int, int]]:
    """(first line, number of lines) of every function with a braced body: declarations, methods, arrows."""
    code = _blank(text)
    found, opened = [], []
    for i, c in enumerate(code):
        if c == "{":
            opened.append(i)
        elif c == "}" and opened:
            start = _function_start(code, opened.pop())
            if start is not None:
                first = code.count("\n", 0, start) + 1
                found.append((first, code.count("\n", start, i) + 1))
    return found


def _function_start(code: str, brace: int) -> int | None:
    """Where the function whose body opens at `brace` starts (its parameters), or None for any other block."""
    before = code[:brace].rstrip()
    arrow = before.endswith("=>")
    if arrow:
        before = before[:-2].rstrip()
    if not before.endswith(")"):
        return len(before) - len(re.search(r"[\w$]*$", before).group()) if arrow else None
    depth, k = 0, len(before) - 1
    while k >= 0:
        depth += {")": 1, "(": -1}.get(before[k], 0)
        if depth == 0:
            break
        k -= 1
    if arrow:
        return k
    keyword = re.search(r"([\w$]*)\s*$", before[:k]).group(1)
    return None if keyword in _NOT_FUNCTIONS else k


def test_few_files_directly_in_js_and_in_each_folder() -> None:
    per_folder = Counter(path.parent for path in scripts())
    top = per_folder.pop(JS_DIR, 0)
    assert 0 < top <= MAX_FILES_AT_TOP, f"{top} files directly in research-ui/js: put them in a folder"
    crowded = {str(d.relative_to(JS_DIR)): k for d, k in per_folder.items() if k > MAX_FILES_PER_FOLDER}
    assert not crowded, f"folders over {MAX_FILES_PER_FOLDER} files: {crowded}"


def test_no_long_file_and_no_long_function() -> None:
    long_files, long_functions = [], []
    for path in scripts():
        text = path.read_text("utf-8")
        name = path.relative_to(JS_DIR).as_posix()
        if (lines := len(text.splitlines())) > MAX_FILE_LINES:
            long_files.append(f"{name}: {lines} lines")
        long = [(first, k) for first, k in functions(text) if k > MAX_FUNCTION_LINES]
        long_functions += [f"{name}:{first} {k} lines" for first, k in long]
    assert not long_files, f"over {MAX_FILE_LINES} lines: {long_files}"
    assert not long_functions, f"functions over {MAX_FUNCTION_LINES} lines: {long_functions}"


def test_every_import_points_at_a_file() -> None:
    broken = [
        f"{path.relative_to(JS_DIR).as_posix()} imports {target}"
        for path in scripts()
        for _, target in _IMPORT.findall(path.read_text("utf-8"))
        if not (path.parent / target).resolve().is_file()
    ]
    assert not broken, broken
    shell = (ROOT / "research-ui" / "index.html").read_text("utf-8")
    entry = re.findall(r'<script type="module" src="([^"]+)"', shell)
    assert entry and all((ROOT / "research-ui" / src).is_file() for src in entry), entry


def test_stylesheets_are_short_and_each_linked_once() -> None:
    """Every stylesheet of the workbench lives in css/, has at most MAX_FILE_LINES lines, and index.html
    links each exactly once (the links' order is the cascade's, so a sheet nobody links is dead code)."""
    sheets = sorted(path.relative_to(CSS_DIR.parent).as_posix() for path in CSS_DIR.parent.rglob("*.css"))
    assert sheets and all(name.startswith("css/") for name in sheets), sheets
    long_files = [
        f"{name}: {lines} lines"
        for name in sheets
        if (lines := len((CSS_DIR.parent / name).read_text("utf-8").splitlines())) > MAX_FILE_LINES
    ]
    assert not long_files, f"over {MAX_FILE_LINES} lines: {long_files}"
    shell = (ROOT / "research-ui" / "index.html").read_text("utf-8")
    links = re.findall(r'<link rel="stylesheet" href="([^"]+)"', shell)
    assert sorted(links) == sheets, f"linked {links}, on disk {sheets}"


def test_the_function_finder_sees_through_strings_regexes_and_templates() -> None:
    """The finder itself: braces in text are not code, and every kind of function body is found."""
    text = (
        "const a = '{'; const r = /[}/]\\}/g; // }\n"
        "function f(x) {\n  if (x) {\n    return `${x ? `{${x}}` : '}'}`;\n  }\n}\n"
        "const g = async (y) => {\n  return y / 2 / 1;\n};\n"
        "class C {\n  m(\n    z,\n  ) {\n    for (const k of z) {\n    }\n  }\n}\n"
    )
    assert sorted(functions(text)) == [(2, 5), (7, 3), (11, 6)]
