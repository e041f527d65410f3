import unittest

from pager import PageOutOfRange, page_count, page_links, paginate


class PageCountTest(unittest.TestCase):
    def test_exact_multiple(self):
        self.assertEqual(page_count(40, 20), 2)

    def test_empty_listing_has_one_page(self):
        self.assertEqual(page_count(0, 20), 1)

    def test_rejects_bad_page_size(self):
        with self.assertRaises(ValueError):
            page_count(10, 0)


class PaginateTest(unittest.TestCase):
    def test_first_page(self):
        page = paginate(list(range(45)), 1)
        self.assertEqual(page.items, list(range(20)))
        self.assertTrue(page.has_next)
        self.assertFalse(page.has_prev)

    def test_last_partial_page_is_reachable(self):
        # 45 rows at 20 a page: the last 5 rows live on page 3.
        page = paginate(list(range(45)), 3)
        self.assertEqual(page.items, [40, 41, 42, 43, 44])
        self.assertEqual(page.total_pages, 3)
        self.assertFalse(page.has_next)

    def test_page_zero_is_out_of_range(self):
        with self.assertRaises(PageOutOfRange):
            paginate([1, 2, 3], 0)


class PageLinksTest(unittest.TestCase):
    def test_short_listing_shows_every_page(self):
        self.assertEqual(page_links(2, 4), [1, 2, 3, 4])

    def test_gaps_become_none(self):
        self.assertEqual(page_links(10, 20), [1, None, 8, 9, 10, 11, 12, None, 20])

    def test_single_missing_page_is_filled_in(self):
        self.assertEqual(page_links(5, 9), [1, 2, 3, 4, 5, 6, 7, 8, 9])


if __name__ == "__main__":
    unittest.main()
