"""Text that goes into report.md: a model name or path is the user's, and may hold what Markdown
reads as its own (a `|` starts a new column, a newline ends the row, `**` bolds, `<b>` is HTML, a
leading `#` makes a list item a heading)."""
import re

#: inline syntax a name may hold; `_` is left alone (inside a word it is not emphasis: qwen2_audio)
_INLINE = re.compile(r"([\\`*\[\]<>|])")


def cell(text) -> str:
    """`text` on one line, shown as written: it stays in its column and in its list item."""
    escaped = _INLINE.sub(r"\\\1", " ".join(str(text).split()))
    return "\\" + escaped if escaped.startswith(("#", "+", "-", "!")) else escaped
