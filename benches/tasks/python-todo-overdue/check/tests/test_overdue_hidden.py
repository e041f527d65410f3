import unittest
from datetime import date

from todo import TodoList

TODAY = date(2024, 6, 15)


def titles(items):
    return [item.title for item in items]


class OverdueTest(unittest.TestCase):
    def setUp(self):
        self.todos = TodoList()
        self.todos.add("no date")
        self.todos.add("last week", due=date(2024, 6, 8))
        self.todos.add("today", due=TODAY)
        self.todos.add("tomorrow", due=date(2024, 6, 16))
        self.todos.add("last year", due=date(2023, 12, 31))
        self.todos.add("yesterday", due=date(2024, 6, 14))
        done = self.todos.add("finished long ago", due=date(2024, 1, 1))
        self.todos.complete(done.id)

    def test_open_items_due_before_today_oldest_first(self):
        self.assertEqual(
            titles(self.todos.overdue(TODAY)),
            ["last year", "last week", "yesterday"],
        )

    def test_keyword_argument(self):
        self.assertEqual(len(list(self.todos.overdue(today=TODAY))), 3)

    def test_completing_removes_from_overdue(self):
        for item in self.todos.all():
            if item.title == "last week":
                self.todos.complete(item.id)
        self.assertEqual(titles(self.todos.overdue(TODAY)), ["last year", "yesterday"])

    def test_nothing_overdue(self):
        self.assertEqual(list(self.todos.overdue(date(2023, 1, 1))), [])
        self.assertEqual(list(TodoList().overdue(TODAY)), [])

    def test_returns_items(self):
        items = list(self.todos.overdue(TODAY))
        self.assertTrue(all(not item.done for item in items))
        self.assertEqual(items[0].due, date(2023, 12, 31))

    def test_does_not_change_the_list(self):
        before = titles(self.todos.all())
        list(self.todos.overdue(TODAY))
        self.assertEqual(titles(self.todos.all()), before)


if __name__ == "__main__":
    unittest.main()
