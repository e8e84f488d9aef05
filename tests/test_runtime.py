"""kbench_app.runtime.settle: a server's import-time objects are left out of the cyclic
collector's passes, once; what pages compute later stays collectable."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_settle_freezes_the_imports_once_and_later_cycles_are_still_collected() -> None:
    script = textwrap.dedent("""
        import gc, weakref
        before = gc.get_freeze_count()
        import kbench_app.kit  # every page imports it: settles the process
        from kbench_app import runtime
        frozen = gc.get_freeze_count()
        import plotly.graph_objects as go
        fig = go.Figure(go.Scatter(x=[1], y=[2]))  # plotly objects refer to each other
        runtime.settle()
        assert gc.get_freeze_count() == frozen, "a second call froze again"

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b, fig
        gc.collect()
        assert alive() is None, "a cycle made after settle() was not collected"
        print(before, frozen)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    before, frozen = map(int, out.stdout.split())
    # the imports' objects (about 160k on Python 3.11) are frozen
    assert before == 0 and frozen > 50_000


@pytest.mark.parametrize("env", [{}, {"OPENBLAS_NUM_THREADS": "2"}])
def test_a_server_keeps_blas_to_one_thread_unless_told(env) -> None:
    import os

    script = textwrap.dedent("""
        from threadpoolctl import threadpool_info
        import kbench_app.kit  # settles the process
        print(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
    """)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**clean, **env})
    assert out.returncode == 0, out.stderr
    threads = int(out.stdout.split()[-1])
    if env:
        assert threads == 2  # a number set by the environment stands
    else:
        assert threads == 1


def test_what_a_freeze_caught_is_collected_once_it_is_garbage_at_the_next_settle() -> None:
    """A server's first freeze comes in its first session's script run: that session's
    objects, which refer to each other, are frozen with the imports. Once the session ended
    they must not stay for the life of the process: a settle() after REFREEZE_SECONDS thaws,
    collects and freezes again (before that, calls do nothing)."""
    script = textwrap.dedent("""
        import gc, weakref
        from kbench_app import runtime

        class Session:  # a session's objects: they refer to each other
            pass

        a, b = Session(), Session()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        runtime.settle()  # the first freeze, while the session is alive
        del a, b  # the session ends
        gc.collect()
        kept = alive() is not None
        runtime.settle()  # within the period: nothing
        kept_within = alive() is not None
        runtime.REFREEZE_SECONDS = 0.0
        runtime.settle()
        print(kept, kept_within, alive() is None, gc.get_freeze_count() > 50_000)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "True"], out.stdout


def test_the_router_settles_before_the_first_session_loads_its_runs() -> None:
    """``streamlit run app.py``: the router settles (and, a period later, settles again) on
    every script run, before the registry loads a session's runs."""
    script = textwrap.dedent("""
        import gc
        from streamlit.testing.v1 import AppTest
        from kbench_app import state

        seen = []
        freeze = gc.freeze

        def watched():
            seen.append(state._run_cache().live())  # runs some session holds, now
            freeze()

        gc.freeze = watched
        at = AppTest.from_file("app.py", default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        assert state._run_cache().live() > 0  # the samples were loaded
        print(seen)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "[0]", out.stdout
