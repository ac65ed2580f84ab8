"""Two gloo processes, one of which stalls: ``python -m torch.distributed.run --nproc_per_node=2 stall_worker.py
MODE FOLDER`` (each rank writes its pid to ``FOLDER/rankR.pid``, for the test to end it). MODE ``sleep``: rank 1 sleeps through a gather (busy elsewhere); ``stop``: rank 1 stops itself (SIGSTOP,
a frozen process). Rank 0 must stop within the collective timeout, naming rank 1."""

from __future__ import annotations

import os
import signal
import sys
import time

from reasongym import distributed

if __name__ == "__main__":
    mode, folder = sys.argv[1], sys.argv[2]
    info = distributed.init_distributed(timeout_s=3.0)
    with open(os.path.join(folder, f"rank{info.rank}.pid"), "w") as handle:
        handle.write(str(os.getpid()))
    distributed.barrier(info)
    if info.rank == 1:
        if mode == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(30)
    started = time.monotonic()
    try:
        distributed.all_gather_objects(info.rank, info)
    except distributed.CollectiveTimeout as error:
        print(f"after {time.monotonic() - started:.1f} s: {error}", file=sys.stderr, flush=True)
        os._exit(3)  # without waiting for the stalled rank
