import unittest

from pager import PageOutOfRange, page_count, paginate


class HiddenPageCountTest(unittest.TestCase):
    def test_rounds_up(self):
        cases = [
            (0, 10, 1), (1, 10, 1), (9, 10, 1), (10, 10, 1), (11, 10, 2),
            (19, 10, 2), (20, 10, 2), (21, 10, 3), (99, 10, 10), (100, 10, 10),
            (101, 10, 11), (7, 1, 7), (1, 50, 1), (3, 2, 2),
        ]
        for total, per_page, expected in cases:
            with self.subTest(total=total, per_page=per_page):
                self.assertEqual(page_count(total, per_page), expected)

    def test_still_validates(self):
        with self.assertRaises(ValueError):
            page_count(5, 0)
        with self.assertRaises(ValueError):
            page_count(-1, 10)


class HiddenPaginateTest(unittest.TestCase):
    def test_every_item_is_on_exactly_one_page(self):
        for total in range(0, 33):
            for per_page in (1, 3, 7, 10):
                items = list(range(total))
                pages = page_count(total, per_page)
                seen = []
                for number in range(1, pages + 1):
                    page = paginate(items, number, per_page)
                    self.assertEqual(page.total_pages, pages)
                    self.assertEqual(page.has_next, number < pages)
                    seen.extend(page.items)
                self.assertEqual(seen, items, f"total={total} per_page={per_page}")
                with self.assertRaises(PageOutOfRange):
                    paginate(items, pages + 1, per_page)

    def test_single_short_page(self):
        page = paginate(["a", "b"], 1, per_page=20)
        self.assertEqual(page.items, ["a", "b"])
        self.assertFalse(page.has_next)


if __name__ == "__main__":
    unittest.main()
