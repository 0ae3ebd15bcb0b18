"""SQLite stores (the source of truth) and their Markdown / JSONL projections."""
