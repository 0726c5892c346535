"""Torch-free helpers shared by the worker process and the CLI side."""
