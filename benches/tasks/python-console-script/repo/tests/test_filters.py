import io
import unittest
from contextlib import redirect_stdout
from pathlib import Path
import tempfile

from logtail.cli import main
from logtail.filters import format_record, keep, parse_lines

SAMPLE = """\
{"level": "info", "message": "started", "pid": 41}
{"level": "warning", "message": "slow request", "request_id": "r-9"}
not json at all
{"level": "error", "message": "upstream timeout", "request_id": "r-10"}
"""


class FilterTest(unittest.TestCase):
    def test_parse_lines_wraps_plain_text(self):
        records = list(parse_lines(SAMPLE.splitlines()))
        self.assertEqual(len(records), 4)
        self.assertEqual(records[2], {"level": "info", "message": "not json at all"})

    def test_keep_by_level_and_grep(self):
        records = list(parse_lines(SAMPLE.splitlines()))
        self.assertEqual([r["message"] for r in records if keep(r, "warning")],
                         ["slow request", "upstream timeout"])
        self.assertEqual([r["message"] for r in records if keep(r, grep="TIMEOUT")],
                         ["upstream timeout"])

    def test_format_record(self):
        record = {"level": "error", "message": "boom", "request_id": "r-1"}
        self.assertEqual(format_record(record, ["request_id", "missing"]), "ERROR    boom request_id=r-1")

    def test_cli_count(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "app.log"
            path.write_text(SAMPLE)
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(main([str(path), "--level", "warning", "--format", "count"]), 0)
        self.assertEqual(out.getvalue(), "2\n")
