#!/usr/bin/env python3
"""Turns a terminal capture with SGR colour codes (tmux capture-pane -e) on stdin into a
self-contained HTML page on stdout: one <pre>, one <span> per run of equal style.
Used by scripts/live-view-picture.sh; only the codes a ratatui view emits are read
(reset, bold, dim, italic, underline, reverse, 16, 256 and 24-bit colours)."""
import html
import re
import sys

BASE16 = [
    "#1e1e1e", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
]
FG, BG = "#d4d4d4", "#1e1e1e"


def colour256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    level = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (level, level, level)


def extended(codes, i):
    """The colour of `38;5;n` / `38;2;r;g;b` starting at codes[i] (the 5 or 2), and
    the index after it."""
    if i < len(codes) and codes[i] == 5 and i + 1 < len(codes):
        return colour256(codes[i + 1]), i + 2
    if i < len(codes) and codes[i] == 2 and i + 3 < len(codes):
        return "#%02x%02x%02x" % tuple(codes[i + 1:i + 4]), i + 4
    return None, len(codes)


def apply(style, codes):
    i = 0
    while i < len(codes):
        c = codes[i]
        i += 1
        if c == 0:
            style.clear()
        elif c in (1, 2, 3, 4, 7):
            style[c] = True
        elif c == 22:
            style.pop(1, None)
            style.pop(2, None)
        elif c in (23, 24, 27):
            style.pop(c - 20, None)
        elif 30 <= c <= 37 or 90 <= c <= 97:
            style["fg"] = BASE16[c - 30 if c < 90 else c - 82]
        elif 40 <= c <= 47 or 100 <= c <= 107:
            style["bg"] = BASE16[c - 40 if c < 100 else c - 92]
        elif c in (38, 48):
            colour, i = extended(codes, i)
            if colour:
                style["fg" if c == 38 else "bg"] = colour
        elif c == 39:
            style.pop("fg", None)
        elif c == 49:
            style.pop("bg", None)


def css(style):
    fg, bg = style.get("fg", FG), style.get("bg", BG)
    if style.get(7):
        fg, bg = bg, fg
    out = [f"color:{fg}"]
    if bg != BG:
        out.append(f"background:{bg}")
    if style.get(1):
        out.append("font-weight:bold")
    if style.get(2):
        out.append("opacity:0.7")
    if style.get(3):
        out.append("font-style:italic")
    if style.get(4):
        out.append("text-decoration:underline")
    return ";".join(out)


def main():
    text = sys.stdin.read()
    style, parts = {}, []
    for piece in re.split(r"(\x1b\[[0-9;]*m)", text):
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", piece)
        if m:
            codes = [int(x) if x else 0 for x in m.group(1).split(";")]
            apply(style, codes)
        elif piece:
            parts.append(f'<span style="{css(style)}">{html.escape(piece)}</span>')
    sys.stdout.write(
        "<!doctype html><meta charset=utf-8><style>"
        f"body{{margin:0;background:{BG}}}"
        "pre{margin:8px;font:13px/1.0 'DejaVu Sans Mono',monospace}"
        "</style><pre>" + "".join(parts) + "</pre>\n"
    )


if __name__ == "__main__":
    main()
