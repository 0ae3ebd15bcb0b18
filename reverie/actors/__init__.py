"""The actors: the writer (L1) now; extractor, flusher, reviewer and the review stages follow."""
