"""Skills that evolve (issue 13): what the loop learns about the skills themselves."""
