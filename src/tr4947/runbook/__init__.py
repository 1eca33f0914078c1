"""Executing the runbook: notebooks run by papermill, results recorded with provenance.

    inputs    what a chapter's results depend on, and its digest (are the results current?)
    record    what a notebook records (Recorder; ``start`` opens one) and prints
    execute   the runner: which chapters must run, papermill with injected parameters, one run
              = one record (results/<target>/<notebook>.json and the executed notebook)
    engine    papermill's nbclient engine, with one progress line per procedure step

Notebooks import only ``start`` from here (so the rest of the runner is not an input of
theirs: editing the renderer re-runs no chapter).
"""
from .record import Recorder, start

__all__ = ["Recorder", "start"]
