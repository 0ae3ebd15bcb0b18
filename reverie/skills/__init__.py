"""Skills that evolve (issue 13): their activity, gaps, curation and the learning graph."""
