"""The data model shared by every stage: types, IR nodes with spans, diagnostics and kernel plans.

This package imports nothing from the other stages.
"""
