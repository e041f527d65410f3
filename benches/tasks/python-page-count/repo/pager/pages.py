"""Split long listings into numbered pages for the web UI and the CLI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, TypeVar

T = TypeVar("T")


class PageOutOfRange(ValueError):
    """Raised when a page number is below 1 or past the last page."""


@dataclass(frozen=True)
class Page:
    number: int  # 1-based
    total_pages: int
    items: list

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages

    @property
    def has_prev(self) -> bool:
        return self.number > 1


def page_count(total: int, per_page: int) -> int:
    """How many pages `total` items fill, `per_page` to a page.

    An empty listing still has one (empty) page, so the UI always has a page 1 to show.
    """
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    if total < 0:
        raise ValueError("total cannot be negative")
    return max(1, total // per_page)


def paginate(items: Sequence[T], page: int, per_page: int = 20) -> Page:
    """The `page`-th page (1-based) of `items`."""
    pages = page_count(len(items), per_page)
    if page < 1 or page > pages:
        raise PageOutOfRange(f"page {page} is out of range 1..{pages}")
    start = (page - 1) * per_page
    return Page(number=page, total_pages=pages, items=list(items[start:start + per_page]))


def page_links(current: int, total_pages: int, window: int = 2) -> list[Optional[int]]:
    """Page numbers to link to around `current`, with None where an ellipsis goes.

    The first and last pages are always shown, plus `window` pages either side of
    `current`; a gap of exactly one page is filled in rather than replaced by None.
    """
    if total_pages < 1:
        return []
    current = min(max(current, 1), total_pages)
    wanted = {1, total_pages}
    wanted.update(range(max(1, current - window), min(total_pages, current + window) + 1))
    links: list[Optional[int]] = []
    previous = 0
    for number in sorted(wanted):
        gap = number - previous
        if gap == 2:
            links.append(previous + 1)
        elif gap > 2:
            links.append(None)
        links.append(number)
        previous = number
    return links
