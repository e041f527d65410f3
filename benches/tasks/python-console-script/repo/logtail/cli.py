from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from . import __version__
from .filters import LEVELS, format_record, keep, parse_lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="logtail", description="Follow and filter JSON-lines logs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("path", nargs="?", default="-", help="log file, or - for stdin")
    parser.add_argument("--level", choices=sorted(LEVELS, key=LEVELS.get), default="debug")
    parser.add_argument("--grep", help="only records whose message contains this text")
    parser.add_argument("--field", action="append", default=[], help="extra field to print")
    parser.add_argument("--format", choices=["text", "count"], default="text")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    stream = sys.stdin if args.path == "-" else open(args.path, encoding="utf-8")
    with stream:
        records = [r for r in parse_lines(stream) if keep(r, args.level, args.grep)]
    match args.format:
        case "count":
            print(len(records))
        case "text":
            for record in records:
                print(format_record(record, args.field))
    return 0
