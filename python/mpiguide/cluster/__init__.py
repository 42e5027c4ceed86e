"""mpiguide's cluster tools: Slurm batch jobs, and the test cluster, a real Slurm cluster that mpiguide starts on
one Linux machine (one network namespace per node) so that the multi-node path is tested for real. Launching
through Slurm itself is core's (core.slurm, core.launch)."""

from mpiguide.cluster import testcluster
from mpiguide.core import slurm

# the launch path (core) learns about test clusters from here; it never imports them
slurm.register_site_finder(testcluster.SITES)
