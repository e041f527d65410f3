import unittest

from wordstats.report import render_report

TEXT = """\
The rover's wheels don't slip; the rover's arm can't reach.
Wheels turn, arm turns, and the rover waits.
"""


class ReportTest(unittest.TestCase):
    def test_report(self):
        self.assertEqual(
            render_report(TEXT, n=4),
            "18 words, 13 unique\n"
            "  arm      2\n"
            "  rover's  2\n"
            "  wheels   2\n"
            "  can't    1\n",
        )

    def test_empty_text(self):
        self.assertEqual(render_report("", n=3), "0 words, 0 unique\n")


if __name__ == "__main__":
    unittest.main()
