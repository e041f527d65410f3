from __future__ import annotations

import json
from typing import Iterable, Iterator, Optional

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}


def parse_lines(lines: Iterable[str]) -> Iterator[dict]:
    """Decode JSON-lines records; lines that aren't JSON objects become {"message": line}."""
    for raw in lines:
        raw = raw.rstrip("\n")
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            record = None
        yield record if isinstance(record, dict) else {"level": "info", "message": raw}


def keep(record: dict, min_level: str = "debug", grep: Optional[str] = None) -> bool:
    level = LEVELS.get(str(record.get("level", "info")).lower(), LEVELS["info"])
    if level < LEVELS[min_level]:
        return False
    if grep and grep.lower() not in str(record.get("message", "")).lower():
        return False
    return True


def format_record(record: dict, fields: list[str]) -> str:
    head = f"{str(record.get('level', 'info')).upper():<8} {record.get('message', '')}"
    extras = [f"{name}={record[name]}" for name in fields if name in record]
    return " ".join([head, *extras]) if extras else head
