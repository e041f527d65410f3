import unittest

from wordstats.tokenize import normalize, tokenize


class TokenizeTest(unittest.TestCase):
    def test_lowercases_and_drops_punctuation(self):
        self.assertEqual(tokenize("Hello, World! Hello?"), ["hello", "world", "hello"])

    def test_hyphenated_words_stay_whole(self):
        self.assertEqual(tokenize("a state-of-the-art tool"), ["a", "state-of-the-art", "tool"])

    def test_contractions_stay_whole(self):
        self.assertEqual(tokenize("Don't panic, it's fine"), ["don't", "panic", "it's", "fine"])

    def test_stray_punctuation_is_not_part_of_a_word(self):
        self.assertEqual(tokenize("'quoted' -- dash- -led"), ["quoted", "dash", "led"])

    def test_unicode_letters(self):
        self.assertEqual(tokenize("Café CRÈME 2024"), ["café", "crème", "2024"])

    def test_normalize_maps_curly_apostrophes(self):
        self.assertEqual(normalize("It\u2019s"), "it's")


if __name__ == "__main__":
    unittest.main()
