"""CSV files streamed to the browser, every cell safe to open in a spreadsheet.

A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to
Excel, LibreOffice and Google Sheets (OWASP "CSV Injection"): a customer ID such as
``=HYPERLINK(...)`` would run when staff open the export. Such a cell gets a leading ``'``,
and every cell is quoted, so a comma or a line break inside stays inside its cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from flask import Response, stream_with_context

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_lines(header: list[str], rows: Iterable[list[Any]]) -> Iterator[str]:
    """The header, then one line per row, each produced as it is read."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow([safe_cell(cell) for cell in header])
    yield buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([safe_cell(cell) for cell in row])
        yield buffer.getvalue()


def csv_download(filename: str, header: list[str], rows: Iterable[list[Any]]) -> Response:
    """A streamed attachment: rows are read in batches while the answer is sent, within the
    request's context (its database session), never held whole in memory."""
    response = Response(
        stream_with_context(csv_lines(header, rows)), mimetype="text/csv; charset=utf-8"
    )
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
