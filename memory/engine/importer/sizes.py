"""How much the import reads, writes and queries at a time, and the most it reads. Read as ``sizes.NAME`` so a
test can shrink them."""

BATCH_ROWS = 1000  # rows per fetch from the legacy file, and the least rows per write batch
CHUNK = 500  # ids / subjects per IN (...) query
MAX_ROWS = 5_000_000  # rows of one legacy file
MAX_FILE_BYTES = 16 * 1024**3  # size of one legacy file
MAX_VALUE_BYTES = 16 * 1024**2  # one value (text or blob) of the legacy file (SQLite's length limit)
