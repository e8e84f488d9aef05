"""The Streamlit side of kbench: run registry, session-state keys and page helpers.

``kbench_app.registry`` is plain Python (tested without Streamlit); ``kbench_app.state`` is the
one module that knows Streamlit's session state.
"""
