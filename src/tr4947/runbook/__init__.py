"""Executing the runbook: the runner owns a run, from the target to the stored record.

papermill's separation of concerns, kept here one module each:

    chapters    which chapters exist (notebooks and their variants), their parameters and the
                values those take (checked before anything runs)
    inputs      what a chapter's results depend on, and its digest (are the results current?)
    execute     the runner: resolves and opens the target once, provisions what a notebook
                declares, executes it with papermill, keeps a complete run, resets the target
    engine      papermill's nbclient engine, with one progress line per procedure step
    provenance  where a run's results came from (commit, changed inputs, versions)
    store       results/<target>/: the run record and the executed notebook, kept apart from
                the notebook's source
    jupyter     JupyterLab, to run a chapter step by step

Notebooks import nothing from here: they attach to the run the runner prepared through
tr4947.procedures.context, so the runner is not an input of theirs (editing the renderer or
the runner re-runs no chapter).

Executed notebooks are outputs, kept in results/<target>/<chapter>.ipynb; the sources in
notebooks/ carry no outputs. nbval re-executes the executed copies (their cells are the
sources' cells, which the input digest covers) and compares their outputs, so drift is caught
without a run ever writing into a file that is also one of its inputs.
"""
import sys

# nbformat (through papermill) imports jsonschema, whose format checkers import rfc3987-syntax
# when it is installed (jupyter-events brings it in), and that compiles a Lark grammar on
# import: about 1.2 s of every runbook start, 4 s on a busy machine. No schema the runbook
# validates checks the "iri" formats it serves, so the runbook's processes go without it
# (jsonschema skips a checker whose module does not import). JupyterLab's own processes are
# not ours and keep it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
