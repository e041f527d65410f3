import argparse
import sys

from .report import render_report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="wordstats")
    parser.add_argument("path", nargs="?", default="-")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args(argv)
    if args.path == "-":
        text = sys.stdin.read()
    else:
        with open(args.path, encoding="utf-8") as f:
            text = f.read()
    sys.stdout.write(render_report(text, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
