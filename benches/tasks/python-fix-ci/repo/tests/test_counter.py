import unittest

from wordstats.counter import DEFAULT_STOPWORDS, count_words, top_words


class CounterTest(unittest.TestCase):
    def test_count_skips_stopwords(self):
        counts = count_words(["the", "cat", "and", "the", "hat"], DEFAULT_STOPWORDS)
        self.assertEqual(dict(counts), {"cat": 1, "hat": 1})

    def test_most_frequent_first(self):
        tokens = ["b", "a", "b", "c", "b", "a"]
        self.assertEqual(top_words(tokens, 2), [("b", 3), ("a", 2)])

    def test_ties_are_alphabetical(self):
        tokens = ["pear", "fig", "apple", "fig", "pear", "apple", "kiwi"]
        self.assertEqual(
            top_words(tokens, 3),
            [("apple", 2), ("fig", 2), ("pear", 2)],
        )

    def test_n_zero_and_negative(self):
        self.assertEqual(top_words(["x"], 0), [])
        with self.assertRaises(ValueError):
            top_words(["x"], -1)


if __name__ == "__main__":
    unittest.main()
