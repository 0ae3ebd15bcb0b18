"""The in-process message bus: typed messages, bounded mailboxes, lazily spawned actors."""
