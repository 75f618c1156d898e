"""Memory of any lookup is O(ids), never O(rows x H) (issue 57, item 1): a table whose vectors are larger
than the memory its process may take is opened (its sidecar built, then verified) and queried in full
under that limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import pelt.table.format
from pelt.table import write_table
from pelt.table.format import sidecar_path

ROWS, H = 16_384, 1024  # 64 MiB of vectors
CHUNK_ROWS = 256  # rows a row group and record batch (1 MiB): building a sidecar holds a few
HEADROOM = 32 << 20  # what the process may take beyond what it holds once imported

# RLIMIT_DATA counts what a process owns (heap, anonymous and private writable mappings), not the
# read-only map of the sidecar, which RLIMIT_AS would count: under a limit the rows' bytes do not fit
# in, any allocation of N x H fails, numpy's (MemoryError) or Arrow's (ArrowMemoryError). Arrow's
# through the system's malloc (mimalloc, its default, reserves a GiB of address space at once), in one
# arena (glibc gives each thread that allocates one of its own), and threads of 1 MiB stacks, as many
# as on 2 CPUs, whatever this machine's: what a thread takes does not grow with the table. Building,
# verifying and querying took 21 MiB more than the imports (16,384 x 1024; 512 ids).
SCRIPT = r"""
import resource, shutil, sys
import numpy as np
import pyarrow as pa
import pelt.table.format
import pelt.table.similar
from pelt.table import EntityTable


def owned() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))


pa.set_cpu_count(2)
pa.set_io_thread_count(2)
pelt.table.similar._CPUS = 2
pa.array(np.zeros(1))  # Arrow imports pandas, if there, at its first numpy array: before the limit
np.ones((4096, 1024), np.float32) @ np.ones(1024, np.float32)  # and OpenBLAS takes its buffers (32 MiB)
limit = owned() + int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
pelt.table.format.CHUNK_ROWS = int(sys.argv[3])
EntityTable.open(sys.argv[1])  # the sidecar built from the Parquet file, a row group at a time
shutil.rmtree(pelt.table.format._stamps())
table = EntityTable.open(sys.argv[1])  # and compared with it, likewise
rows = np.random.default_rng(0).integers(0, len(table), 512)
ids = table.ids_at(rows)
for by, names in (("id", ids), ("qid", table.qids(ids)), ("alias", [i.upper() for i in ids])):
    for ignore_case in (False, True):
        assert table.find(names, by=[by], ignore_case=ignore_case) == ids, by
    found = table.find(names, by=[by])
    assert table.lookup(found).shape == table.vector_sums(found).shape == (512, table.hidden_size)
assert ids[0] in table and table.counts(ids)[0].shape == (512,)
for entity in ids[:2]:
    assert len(table.most_similar(entity, k=5)) == 5
assert len(pelt.table.similar.nearest(table, np.ones(table.hidden_size), 5)) == 5
print("looked up")
try:
    np.concatenate([sums for _, sums in table.batches()])
except MemoryError:
    print("all rows refused")
"""


def _small_stacks() -> None:
    """A thread's stack is as large as the stack limit (glibc's default): 1 MiB, not 8."""
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, resource.getrlimit(resource.RLIMIT_STACK)[1]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA and /proc are Linux's")
def test_a_table_larger_than_the_memory_limit_is_looked_up_within_it(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    ids = [f"Entity {i}" for i in rng.permutation(ROWS)]
    sums = np.tile(rng.normal(size=(64, H)).astype(np.float32), (ROWS // 64, 1))  # compresses: a fast write
    monkeypatch.setattr(pelt.table.format, "CHUNK_ROWS", CHUNK_ROWS)
    meta = {"model": "m", "revision": "r", "hidden_size": H, "representation": "r", "max_seq_len": 8, "norm": 7.0}
    qids = [f"Q{i.split()[1]}" for i in ids]
    write_table(
        tmp_path / "t.parquet",
        ids,
        sums,
        np.ones(ROWS),
        np.ones(ROWS),
        meta,
        qids=qids,
        aliases=[[i.upper()] for i in ids],
    )
    sidecar_path(tmp_path / "t.parquet").unlink()
    assert ROWS * H * 4 >= 2 * HEADROOM
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "t.parquet"), str(HEADROOM), str(CHUNK_ROWS)],
        capture_output=True,
        text=True,
        env={**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "1"},
        preexec_fn=_small_stacks,
        timeout=300,
    )
    assert run.stdout.split("\n")[:2] == ["looked up", "all rows refused"], run.stderr[-3000:]
