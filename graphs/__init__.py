"""memstrata.graphs: see ARCHITECTURE.md; filled in by the construction and recall work."""
