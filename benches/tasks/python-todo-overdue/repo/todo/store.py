from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Iterable, Optional

from .model import Item


class UnknownItem(KeyError):
    """No item has the given id."""


class TodoList:
    def __init__(self, items: Iterable[Item] = ()):
        self._items: dict[int, Item] = {}
        for item in items:
            self._items[item.id] = item
        self._next_id = max(self._items, default=0) + 1

    def add(self, title: str, due: Optional[date] = None, tags: Iterable[str] = ()) -> Item:
        title = title.strip()
        if not title:
            raise ValueError("title cannot be empty")
        item = Item(id=self._next_id, title=title, due=due, tags=sorted(set(tags)))
        self._items[item.id] = item
        self._next_id += 1
        return item

    def get(self, item_id: int) -> Item:
        try:
            return self._items[item_id]
        except KeyError:
            raise UnknownItem(item_id) from None

    def complete(self, item_id: int) -> Item:
        item = self.get(item_id)
        item.done = True
        return item

    def remove(self, item_id: int) -> None:
        self.get(item_id)
        del self._items[item_id]

    def all(self) -> list[Item]:
        return list(self._items.values())

    def open_items(self) -> list[Item]:
        return [item for item in self._items.values() if not item.done]

    def with_tag(self, tag: str) -> list[Item]:
        return [item for item in self._items.values() if tag in item.tags]

    # -- persistence ---------------------------------------------------------

    def save(self, path: Path) -> None:
        data = [item.to_dict() for item in self._items.values()]
        Path(path).write_text(json.dumps(data, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> "TodoList":
        path = Path(path)
        if not path.exists():
            return cls()
        return cls(Item.from_dict(entry) for entry in json.loads(path.read_text()))
