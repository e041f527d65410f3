import unittest

from wordstats import render_report, tokenize, top_words


class HiddenTokenizeTest(unittest.TestCase):
    def test_joiners_between_letters(self):
        self.assertEqual(
            tokenize("Rock'n'roll isn't old-school, y'all"),
            ["rock'n'roll", "isn't", "old-school", "y'all"],
        )

    def test_curly_apostrophes(self):
        self.assertEqual(tokenize("We\u2019re here, they\u2019ve gone"), ["we're", "here", "they've", "gone"])

    def test_leading_trailing_and_doubled_joiners_split(self):
        self.assertEqual(tokenize("the students' work"), ["the", "students", "work"])
        self.assertEqual(tokenize("''hi'' don''t well--known -x- it's-"), ["hi", "don", "t", "well", "known", "x", "it's"])

    def test_mixed_joiners(self):
        self.assertEqual(tokenize("O'Neil's up-to-date o'clock"), ["o'neil's", "up-to-date", "o'clock"])

    def test_digits(self):
        self.assertEqual(tokenize("v2 route 3-4 (2024)"), ["v2", "route", "3-4", "2024"])


class HiddenTopWordsTest(unittest.TestCase):
    def test_order_does_not_depend_on_input_order(self):
        tokens = ["delta", "bravo", "charlie", "alpha"] * 2 + ["echo"] * 3
        expected = [("echo", 3), ("alpha", 2), ("bravo", 2), ("charlie", 2), ("delta", 2)]
        self.assertEqual(top_words(tokens, 10), expected)
        self.assertEqual(top_words(list(reversed(tokens)), 10), expected)
        self.assertEqual(top_words(tokens, 3), expected[:3])

    def test_stopwords(self):
        self.assertEqual(top_words(["the", "zebra", "the", "ant"], 5, {"the"}), [("ant", 1), ("zebra", 1)])

    def test_accepts_a_generator(self):
        self.assertEqual(top_words((w for w in ["b", "a", "b"]), 1), [("b", 2)])


class HiddenReportTest(unittest.TestCase):
    def test_report_ties_and_contractions(self):
        text = "Zoe's zebra won't wait. Amy's ant won't wait either; Zoe's zebra naps."
        self.assertEqual(
            render_report(text, n=5),
            "12 words, 8 unique\n"
            "  wait   2\n"
            "  won't  2\n"
            "  zebra  2\n"
            "  zoe's  2\n"
            "  amy's  1\n",
        )


if __name__ == "__main__":
    unittest.main()
