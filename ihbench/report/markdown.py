"""Text that goes into report.md: a model name or path is the user's, and may hold what Markdown
reads as its own (a `|` starts a new column, a newline ends the row, `**` bolds, `<b>` is HTML, a
leading `#` makes a list item a heading, `$x$` is mathematics and `~~x~~` struck through where the
viewer renders them: GitHub and the Hub do)."""
import re

#: inline syntax a name may hold; `_` only at a word's edge (inside one it is no emphasis: qwen2_audio)
_INLINE = re.compile(r"([\\`*\[\]<>|$~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def cell(text) -> str:
    """`text` on one line, shown as written: it stays in its column and in its list item."""
    escaped = _INLINE.sub(r"\\\1", " ".join(str(text).split()))
    return "\\" + escaped if escaped.startswith(("#", "+", "-", "!")) else escaped
