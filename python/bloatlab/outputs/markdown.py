"""Markdown pages as self-contained HTML (no JavaScript, nothing loaded): the reports of
``bloatlab reproduce`` and ``bloatlab fixes``."""

from __future__ import annotations

import html

CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d2330;
       background: #fafbfc; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; } h2 { font-size: 20px; margin-top: 34px; border-bottom: 1px solid #dde; padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 24px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; background: #fff; }
th, td { border: 1px solid #d8dbe3; padding: 4px 8px; text-align: right; }
th { background: #eef1f6; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #e3e6ec; background: #fff; }
code { background: #f0f2f6; padding: 1px 4px; border-radius: 3px; }
blockquote { color: #4a5263; border-left: 3px solid #c8cdd8; margin-left: 0; padding-left: 12px; }
"""


def markdown_to_html(markdown: str, title: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n"
            f"<body><main>\n{body}</main></body></html>\n")
