"""Characters a terminal or a file listing does not show as themselves: C0 and C1 controls (a NUL
vanishes, a carriage return rewrites the line, ESC starts a command to the terminal) and the
bidirectional controls (a right-to-left override turns the rest of the line around). An id or a path
from a user's file may hold any of them; the commands' output escapes them (`ihbench.cli.common.shown`)
and export's folder names replace them (`export.folder_name`)."""

#: the body of a regular-expression character class: C0 except tab and newline, DEL and C1, bidi controls
UNSHOWN = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
