"""mpiguide on a cluster: the Slurm side of launching (which Slurm, which transports, batch jobs) and the
test cluster, a real Slurm cluster that mpiguide starts on one Linux machine (one network namespace per
node) so that the multi-node path is tested for real."""
