"""Text that goes into report.md's tables: a model name or path is the user's, and may hold what a
Markdown table reads as its own (a `|` starts a new column, a newline ends the row)."""


def cell(text) -> str:
    """`text` on one line, its pipes escaped: it stays in its column."""
    return " ".join(str(text).split()).replace("|", "\\|")
