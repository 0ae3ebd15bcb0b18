"""Skills that evolve: proposals and changes to the agent-made skills."""
