"""STS and transfer tasks: data + embeddings -> scores (no printing, no files)."""
