"""Benchmarks of deepresearch (issue 13): `python -m bench --quick`, `python -m bench`, `... --peer`.

They are not part of the test suite: every figure is measured against real processes on 127.0.0.1 (the
scripted peers of peers/ with fixed latencies, a real `deepresearch serve`, real SSE clients).
"""
