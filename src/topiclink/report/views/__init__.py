"""One module per view of the report (plain data, NumPy only)."""
