"""CSV from outside, read through one door with the JSON reader's rules.

The text must be UTF-8 (a spreadsheet's byte order mark is allowed), as a JSON body must be;
no cell may hold NUL or a lone surrogate, refused with ``app.json_input``'s own check (no
engine stores the one, no driver encodes the other); and no cell may be longer than the
caller's limit, which is the limit the JSON API puts on the same values. Every problem names
its line (the header is line 1, as a spreadsheet numbers it) and its column, and all of them
are reported at once, so one upload shows everything to fix.

Python's ``csv`` module refuses a field over its own limit (131,072 characters) with an
exception that says neither the line nor the column; that limit is raised here once, for the
process, above any request body this service accepts, so the cell limit below judges first.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from app.json_input import JsonInputError, check_text

# Above any request body (MAX_CONTENT_LENGTH); the cell limit of the reader does the judging.
csv.field_size_limit(max(csv.field_size_limit(), 64 * 1024 * 1024))


class CsvInputError(ValueError):
    """The file cannot be taken; ``problems`` says where and why, one sentence each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Table:
    """The header's cells (stripped) and every non-empty row with its line number."""

    header: list[str]
    rows: list[tuple[int, list[str]]]


def read_table(data: bytes, *, max_rows: int, max_cell: int) -> Table:
    """Parse ``data``; raise ``CsvInputError`` for a file that is not text, has more than
    ``max_rows`` rows, or any cell that is not text this service stores."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CsvInputError(
            [f"Line {line}: the file is not UTF-8 text; save it as “CSV UTF-8”."]
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    problems: list[str] = []
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            line = reader.line_num
            problems.extend(_cell_problems(line, header or [], cells, max_cell))
            if header is None:
                header = [cell.strip() for cell in cells]
                continue
            if not any(cell.strip() for cell in cells):
                continue
            if len(rows) == max_rows:
                raise CsvInputError([f"The file has more than {max_rows:,} rows; split it."])
            rows.append((line, cells))
    except csv.Error as exc:
        problems.append(f"Line {reader.line_num}: the file cannot be read as CSV ({exc}).")
    if problems:
        raise CsvInputError(problems)
    return Table(header or [], rows)


def _cell_problems(line: int, header: list[str], cells: list[str], max_cell: int) -> list[str]:
    problems = []
    for index, cell in enumerate(cells):
        column = _column_name(header, index)
        if len(cell) > max_cell:
            problems.append(
                f"Line {line}, column {column}: the value is {len(cell):,} characters long; "
                f"at most {max_cell:,} are allowed."
            )
            continue
        try:
            check_text(cell)
        except JsonInputError as exc:
            problems.append(f"Line {line}, column {column}: {exc}.")
    return problems


def _column_name(header: list[str], index: int) -> str:
    """The header's name for a column, else its position (the header itself, extra cells)."""
    name = header[index] if index < len(header) else ""
    return name if name else str(index + 1)
