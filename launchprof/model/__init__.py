"""The report contract: frozen dataclasses, one module per section, validated by pydantic only where read."""
