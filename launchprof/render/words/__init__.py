"""Sentences and number formats: every word a report says, from its records.

Below analysis, which fills the report's strings for readers with them; they import only
the model."""
