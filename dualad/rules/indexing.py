"""Selecting by index and mask, writing in place, set operations and weighted counts."""
