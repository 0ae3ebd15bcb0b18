"""Skills that evolve (issue 13): scoring, drafts, curation helpers."""
