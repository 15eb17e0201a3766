"""How much the import reads, writes and queries at a time. Read as ``sizes.NAME`` so a test can shrink them."""

BATCH_ROWS = 1000  # rows per fetch from the legacy file, and the least rows per write batch
CHUNK = 500  # ids / subjects per IN (...) query
