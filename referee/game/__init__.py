"""Playing one game: between bots over gRPC (match), of bot specs (single), with a person in a
seat (human), of built-in policies in process (simulate)."""
