"""Results: one typed, versioned JSON file per (model, task)."""
