"""Placeholder: this check family is being written."""
