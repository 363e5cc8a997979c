"""Prompts and their pydantic response schemas, one module per node family."""
