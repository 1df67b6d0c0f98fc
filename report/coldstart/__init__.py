"""Cold start: the cold-start records summed up, drawn, and set across releases."""
