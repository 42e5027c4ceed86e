"""mpiguide: performance-guideline checks for MPI libraries."""

__version__ = "0.1.0"
