"""What every suite shares: MPI stacks, builds, launches, run directories, raw
files, statistics, verdict pairing, and the report and chart helpers. Nothing
in core knows which suites exist (mpiguide.suites registers them)."""
