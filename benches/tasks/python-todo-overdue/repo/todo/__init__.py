"""A tiny to-do list kept in a JSON file."""

from .model import Item
from .store import TodoList, UnknownItem

__all__ = ["Item", "TodoList", "UnknownItem"]
