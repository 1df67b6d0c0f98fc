"""Shape streams in the report: the stream records summed up per case (`data`)."""
