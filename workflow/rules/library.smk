# The one place pelt is found: this checkout's src/. On sys.path for the imports of the rules files
# (the task registry, the config checks: pure Python); in PYTHONPATH, ahead of any installed pelt,
# for the jobs Snakemake starts, so that they run the library the rules were parsed with (Spark's
# Python workers get the driver's pelt shipped: pelt.spark). A --use-conda job has PYTHONPATH
# removed by Snakemake, but its script's preamble extends sys.path with this process's, src/
# included (such an environment has no pelt of its own). A cluster job parses this file again on
# its node. Included first, so that the Snakefile can check its config file with pelt.
import os
import sys

PELT_SRC = os.path.join(workflow.basedir, "src")
sys.path.insert(0, PELT_SRC)
INHERITED_PYTHONPATH = filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))
os.environ.update(  # set, not required (no envvars: directive); once if parsed again
    PYTHONPATH=os.pathsep.join(dict.fromkeys([PELT_SRC, *INHERITED_PYTHONPATH]))
)
