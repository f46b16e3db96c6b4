"""Small utilities with no room of their own: seeds, files beside the package, optional extras,
TOML rule files, output folders, quiet gRPC logs."""
