import tempfile
import unittest
from datetime import date
from pathlib import Path

from todo import TodoList, UnknownItem


class TodoListTest(unittest.TestCase):
    def test_add_assigns_increasing_ids(self):
        todos = TodoList()
        first = todos.add("Buy milk")
        second = todos.add("Call plumber")
        self.assertEqual((first.id, second.id), (1, 2))

    def test_blank_title_is_rejected(self):
        with self.assertRaises(ValueError):
            TodoList().add("   ")

    def test_complete_hides_item_from_open_items(self):
        todos = TodoList()
        todos.add("a")
        b = todos.add("b")
        todos.complete(b.id)
        self.assertEqual([i.title for i in todos.open_items()], ["a"])

    def test_unknown_id(self):
        with self.assertRaises(UnknownItem):
            TodoList().complete(7)

    def test_with_tag(self):
        todos = TodoList()
        todos.add("taxes", tags=["admin", "money"])
        todos.add("gym", tags=["health"])
        self.assertEqual([i.title for i in todos.with_tag("admin")], ["taxes"])

    def test_round_trip(self):
        todos = TodoList()
        todos.add("passport", due=date(2024, 7, 1), tags=["admin"])
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "todo.json"
            todos.save(path)
            loaded = TodoList.load(path)
        self.assertEqual(loaded.get(1).due, date(2024, 7, 1))
        self.assertEqual(loaded.add("next").id, 2)


if __name__ == "__main__":
    unittest.main()
