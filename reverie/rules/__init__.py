"""Pure rules with no I/O: near-duplicate tiers, the supersede rule, tool-input validation."""
