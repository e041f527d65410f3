"""Split long listings into numbered pages."""

from .pages import Page, PageOutOfRange, page_count, page_links, paginate

__all__ = ["Page", "PageOutOfRange", "page_count", "page_links", "paginate"]
