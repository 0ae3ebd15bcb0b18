"""Seed 004's dream cycle, in parts the dreamer stage (``reverie.actors.dreamer``) puts
together: when it is due (``schedule``), the long-term recall (``reverie.stores.longterm``),
the health score (``health``), what it learnt (``distil``) and its reports (``report``).
Leaf modules: none imports an actor."""
