"""The front end shared by the CLI and the suites' own commands: options, consoles,
progress and the course of a tune workflow (mpiguide.core does the work)."""
