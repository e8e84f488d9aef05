"""Session-state keys and the cached loader: the only place pages touch ``st.session_state``."""

from __future__ import annotations

import argparse
from pathlib import Path

import streamlit as st

from kbench_app.registry import RunRegistry
from kbench_core.io import Run, load_run
from kbench_core.workspace import Workspace

REGISTRY = "kbench_registry"
SEEN_UPLOADS = "kbench_seen_uploads"
UPLOAD_NONCE = "kbench_upload_nonce"
LAST_REPORT = "kbench_last_report"

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
SAMPLE_FILES = ("bias.csv", "replication.csv", "replication_summary.csv", "judged.csv")


def app_options(argv: list[str]) -> argparse.Namespace:
    """Options given after ``--`` to ``streamlit run app.py`` (``kbench app`` passes them)."""
    parser = argparse.ArgumentParser(prog="kbench app", add_help=False)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--workspace", default=None)
    parser.add_argument("--no-samples", action="store_true")
    options, _ = parser.parse_known_args(argv)
    return options


@st.cache_resource(max_entries=64, show_spinner=False)
def _cached_load(filename: str, sha256: str, _data: bytes) -> Run:
    # Keyed on the content hash; cache_resource keeps the object itself (no pickling).
    return load_run((filename, _data))


def cached_loader(filename: str, data: bytes) -> Run:
    import hashlib

    return _cached_load(filename, hashlib.sha256(data).hexdigest(), data)


def registry(argv: list[str] | None = None) -> RunRegistry:
    """This session's registry, created on first use with samples, CLI files and workspace."""
    if REGISTRY in st.session_state:
        return st.session_state[REGISTRY]
    import sys

    options = app_options(sys.argv[1:] if argv is None else argv)
    workspace = Workspace(Path(options.workspace)) if options.workspace else None
    reg = RunRegistry(workspace=workspace)
    with st.spinner("Loading runs..."):
        reg.load_workspace()
        if not options.no_samples:
            samples = [SAMPLE_DIR / f for f in SAMPLE_FILES if (SAMPLE_DIR / f).exists()]
            # Samples ship with the code: the workspace keeps only what the user added.
            reg.add_paths(samples, cached_loader, persist=False)
        reg.add_paths(options.files, cached_loader)
    st.session_state[REGISTRY] = reg
    st.session_state[SEEN_UPLOADS] = set()
    return reg
