"""A forward and backward 3D FFT by mpi4py-fft (Dalcin, Mortensen and Keyes 2019), an application mpiguide's
authors did not write: its global transposes are MPI_Alltoallw calls with subarray datatypes. The result is
checked against numpy's serial FFT of the same array on every rank, so a wrong transpose cannot pass; the
last line is the time per forward+backward pair (docs/app-tuning.md measures it with `mpiguide app`).

    mpiexec -n 2 python examples/mpi4py_fft_transform.py [N] [PAIRS]

Needs mpi4py built against the stack's MPI and mpi4py-fft 2.0.6 (with FFTW); docs/app-tuning.md says how.
"""

import sys
import time

import numpy as np
from mpi4py import MPI
from mpi4py_fft import PFFT, newDistArray

n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
comm = MPI.COMM_WORLD
# FFTW_ESTIMATE: the same plan in every launch, so that the printed checks are the same too
fft = PFFT(comm, (n, n, n), axes=(0, 1, 2), dtype=np.complex128, backend="fftw", flags=("FFTW_ESTIMATE",))
rng = np.random.default_rng(2019)
whole = rng.standard_normal((n, n, n)) + 1j * rng.standard_normal((n, n, n))
u = newDistArray(fft, False)
u[:] = whole[u.local_slice()]
u_hat = newDistArray(fft, True)
u_hat = fft.forward(u, u_hat)
expected = np.fft.fftn(whole)[u_hat.local_slice()] / n**3  # mpi4py-fft normalizes the forward transform
forward_error = comm.allreduce(float(np.abs(u_hat - expected).max()), op=MPI.MAX)
back = newDistArray(fft, False)
back = fft.backward(u_hat, back)
round_trip_error = comm.allreduce(float(np.abs(back - u).max()), op=MPI.MAX)
if comm.rank == 0:
    print(f"mpi4py-fft {n}^3 on {comm.size} processes: forward {'ok' if forward_error < 1e-10 else forward_error}, "
          f"round trip {'ok' if round_trip_error < 1e-10 else round_trip_error}")

comm.Barrier()
t = time.perf_counter()
for _ in range(pairs):
    u_hat = fft.forward(u, u_hat)
    back = fft.backward(u_hat, back)
seconds = comm.allreduce((time.perf_counter() - t) / pairs, op=MPI.MAX)
if comm.rank == 0:
    print(f"seconds per forward+backward: {seconds:.6e}")
