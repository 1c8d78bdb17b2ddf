"""Package data: the WordPiece vocabulary of the offline embedder (see NOTICE)."""
