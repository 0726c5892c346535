"""The files a user names: reading them with one-line errors, and the one writer of every output file."""
