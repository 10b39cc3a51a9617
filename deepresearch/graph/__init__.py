"""The graph: its state, its nodes (one per stage) and the schemas of what a model answers in them."""
