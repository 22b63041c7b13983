"""Run notebooks top to bottom in a fresh kernel of this interpreter; store them executed.

``python notebooks/execute.py`` re-executes every notebook here in place (what
is committed is what a reader sees: outputs and charts as PNG).
``python notebooks/execute.py NOTEBOOK --out PATH`` writes the executed copy
to PATH instead and prints the seconds it took; ``tests/docs/test_notebooks.py``
runs that and compares the outputs with the stored ones.

The kernel is this interpreter (``sys.executable``), whatever kernels Jupyter
has installed, with the checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def execute(notebook: Path, out: Path, *, timeout: int) -> float:
    """Execute ``notebook`` into ``out``; the seconds it took."""
    import nbformat  # noqa: PLC0415 - the notebooks extra
    from jupyter_client.kernelspec import KernelSpecManager  # noqa: PLC0415
    from jupyter_client.manager import KernelManager  # noqa: PLC0415
    from nbclient import NotebookClient  # noqa: PLC0415

    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")])
    )
    with tempfile.TemporaryDirectory() as kernels:
        spec = Path(kernels) / "prm"
        spec.mkdir()
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "prm"}))
        specs = KernelSpecManager(kernel_dirs=[kernels], ensure_native_kernel=False)
        executed = nbformat.read(notebook, as_version=4)
        client = NotebookClient(
            executed,
            km=KernelManager(kernel_name="prm", kernel_spec_manager=specs),
            timeout=timeout,
            allow_errors=False,
            record_timing=False,  # no timestamps in the stored copy: its diff shows outputs only
            # as Jupyter runs it: next to the notebook
            resources={"metadata": {"path": str(notebook.parent)}},
        )
        start = time.perf_counter()
        client.execute()  # raises CellExecutionError, naming the cell, on the first error
        elapsed = time.perf_counter() - start
    nbformat.write(executed, out)
    return elapsed


def main() -> None:
    """Execute the notebooks named (default: every one here, in place)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, help="write the one executed notebook here")
    parser.add_argument("--timeout", type=int, default=90, help="seconds per cell")
    args = parser.parse_args()
    notebooks = args.notebooks or sorted(HERE.glob("*.ipynb"))
    if args.out is not None and len(notebooks) != 1:
        parser.error("--out takes exactly one notebook")
    for notebook in notebooks:
        elapsed = execute(notebook, args.out or notebook, timeout=args.timeout)
        print(f"{elapsed:.1f}" if args.out else f"{notebook.name}: {elapsed:.1f} s")


if __name__ == "__main__":
    main()
