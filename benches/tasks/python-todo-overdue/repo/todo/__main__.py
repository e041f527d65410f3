import argparse
import os
from datetime import date
from pathlib import Path

from .store import TodoList

DEFAULT_FILE = Path(os.environ.get("TODO_FILE", Path.home() / ".todo.json"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="todo")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("title")
    add.add_argument("--due", type=date.fromisoformat)
    add.add_argument("--tag", action="append", default=[])
    done = sub.add_parser("done")
    done.add_argument("id", type=int)
    sub.add_parser("list")
    args = parser.parse_args(argv)

    todos = TodoList.load(args.file)
    if args.command == "add":
        item = todos.add(args.title, due=args.due, tags=args.tag)
        print(f"added #{item.id}")
    elif args.command == "done":
        todos.complete(args.id)
    elif args.command == "list":
        for item in todos.open_items():
            due = f" (due {item.due.isoformat()})" if item.due else ""
            print(f"#{item.id} {item.title}{due}")
    todos.save(args.file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
