"""``reverie simulate``: seeded conversations with ground truth, driven concurrently through
the public API, measured into a report (load, cost, writes, and learning quality)."""
