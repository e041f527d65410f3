from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Optional


@dataclass
class Item:
    id: int
    title: str
    done: bool = False
    due: Optional[date] = None
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "done": self.done,
            "due": self.due.isoformat() if self.due else None,
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        due = data.get("due")
        return cls(
            id=data["id"],
            title=data["title"],
            done=data.get("done", False),
            due=date.fromisoformat(due) if due else None,
            tags=list(data.get("tags", [])),
        )
