"""The runner: the one owner of a run, from the target to the stored record.

For a target (resolved once: a name under playbook/inventory/, a path to an inventory, or
$TR4947_TARGET; opened once for the whole runbook) and each chapter (tr4947.runbook.chapters):

1. **Up to date?** The chapter's inputs (tr4947.runbook.inputs) are digested and compared with
   its committed run record. Same digest: the committed results stand and nothing runs,
   unless forced or named.
2. **Provision** what the notebook declares (``metadata.tr4947.provision``) on the open Target.
3. **Run.** papermill executes the notebook with the runner's parameters (``target``,
   ``confirm``, ``results_dir``: a staging directory, build/runs/<run id>/) and the
   chapter's; ``results_dir/run.json`` hands the kernel the run, resolved
   (tr4947.procedures.context): the notebook opens nothing itself.
4. **Record.** Only a complete run (its records end with ``finished``) replaces the committed
   results: the run record (records plus provenance, with the parameters papermill injected)
   and the executed notebook (tr4947.runbook.store). A failed run leaves the previous results
   in place and says so.
5. **Reset** the target: a lab the chapter found down is taken down again, whatever the
   chapter left running (a lab that was already up, and a real target, are left as they are).
"""
from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import inventory as inventory_mod
from .. import paths
from ..procedures import context, record
from . import engine, profile, provenance, store
from .chapters import (Chapter, RunbookError, as_chapter, chapters, check_parameters,
                       defaults)
from .inputs import Inputs, chapter_inputs

RESULTS = store.RESULTS
NOTEBOOKS = paths.REPO / "notebooks"

__all__ = ["Outcome", "Runner", "RunbookError", "RESULTS", "run", "freshness"]


@dataclass
class Outcome:
    notebook: str
    status: str                     # ran | up-to-date | failed
    seconds: float
    run_id: str = ""
    error: str = ""
    why: str = ""


class Runner:
    """One runbook invocation on one target (see the module doc)."""

    def __init__(self, target: str | Path | None = None, confirm: bool = False,
                 results: Path = RESULTS, out=sys.stderr):
        self.inventory = inventory_mod.load(inventory_mod.resolve(target))
        self.label = self.inventory.name
        self.kind = self.inventory.kind
        self.confirm = confirm
        self.results = Path(results)
        self.out = out
        self._target = None

    @property
    def target(self):
        """The Target, opened once (on first use: a status query opens nothing)."""
        if self._target is None:
            from .. import targets
            self._target = targets.open(self.inventory, confirm=self.confirm, echo=False)
        return self._target

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    # --- what would run -----------------------------------------------------------------------
    def chapters(self, selected: list[str] | None = None) -> list[Chapter]:
        return chapters(selected, lab=self.kind == "lab")

    def parameters(self, chapter: Chapter, given: dict) -> dict:
        """What the chapter runs with (besides target and results_dir): confirm, the
        variant's parameters, the ones given."""
        return {"confirm": self.confirm, **chapter.parameters, **given}

    def check(self, chs: list[Chapter], given: dict) -> None:
        for ch in chs:
            check_parameters(ch, self.parameters(ch, given))

    def freshness(self, chapter: Chapter, given: dict) -> tuple[Inputs, str | None]:
        """(inputs, why it must run): why is None when the committed results are current."""
        params = self.parameters(chapter, given)
        inputs = chapter_inputs(chapter.path, self.inventory, params)
        rec = store.committed(self.label, chapter.name, self.results)
        if rec is None or not rec.get("run"):
            return inputs, "never run"
        run = rec["run"]
        if run.get("digest") == inputs.digest:
            return inputs, None
        changed = inputs.changed(run.get("inputs", {}))
        if inputs.parameters != run.get("parameters", {}):
            changed.append("parameters")
        shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more"
                                          if len(changed) > 6 else "")
        return inputs, f"inputs changed since run {run.get('id')}: {shown or 'parameters'}"

    def note_current(self, rows: list[dict]) -> None:
        """Tell the site build what the guide's sources give now (chapter -> digest), so each
        result can say whether it is current (paths.CURRENT). Only for
        the committed results root: a bench's temporary root says nothing about the guide."""
        if self.results.resolve() != RESULTS.resolve():
            return
        from ..atomic import write_json
        paths.CURRENT.parent.mkdir(parents=True, exist_ok=True)
        write_json(paths.CURRENT, {"target": self.label, "chapters": [
            {"chapter": r["chapter"], "digest": r["digest"]} for r in rows]})

    def status(self, selected: list[str] | None, given: dict) -> list[dict]:
        chs = self.chapters(selected)
        self.check(chs, given)
        out = []
        for ch in chs:
            _inputs, why = self.freshness(ch, given)
            rec = store.committed(self.label, ch.name, self.results)
            out.append({"chapter": ch.name, "up_to_date": why is None,
                        "run": (rec or {}).get("run", {}) and rec["run"]["id"], "why": why,
                        "digest": _inputs.digest})
        if selected is None and not given:
            self.note_current(out)
        return out

    # --- running ------------------------------------------------------------------------------
    def run(self, selected: list[str] | None = None, force: bool = False,
            given: dict | None = None) -> list[Outcome]:
        given = dict(given or {})
        chs = self.chapters(selected)
        self.check(chs, given)
        outcomes: list[Outcome] = []
        current: list[dict] = []
        try:
            for i, ch in enumerate(chs, 1):
                inputs, why = self.freshness(ch, given)
                current.append({"chapter": ch.name, "digest": inputs.digest})
                if force or selected:
                    why = why or ("forced" if force else "named on the command line")
                if why is None:
                    rec = store.committed(self.label, ch.name, self.results)
                    self.say(f"[{i}/{len(chs)}] {ch.name}: up to date (run {rec['run']['id']})")
                    outcomes.append(Outcome(ch.name, "up-to-date", 0.0, rec["run"]["id"]))
                    continue
                self.say(f"[{i}/{len(chs)}] {ch.name} on {self.label}: runs ({why})")
                o = self.run_one(ch, given, inputs)
                o.why = why
                outcomes.append(o)
        finally:
            if self._target is not None:
                self._target.close()
        if selected is None and not given:
            self.note_current(current)
        return outcomes

    def run_one(self, chapter: Chapter, given: dict, inputs: Inputs) -> Outcome:
        import papermill as pm
        from papermill.exceptions import PapermillExecutionError
        run_id = context.new_run_id()
        stage = paths.BUILD / "runs" / run_id
        stage.mkdir(parents=True, exist_ok=True)
        executed = stage / chapter.path.name
        params = self.parameters(chapter, given)
        started = record.now()
        t0 = time.monotonic()
        # A lab that was up before the chapter (the reader's own `lab up`, another run) is
        # left up afterwards; one the chapter brought up goes down with it.
        was_up = self.target.running()
        try:
            try:
                said = self.provision(chapter, params)
                context.RunFile(run_id, chapter.path.stem,
                                chapter.declaration.get("chapter", chapter.path.stem),
                                self.label, str(self.inventory.path), self.kind,
                                self.confirm, said).write(stage)
                pm.execute_notebook(str(chapter.path), str(executed),
                                    parameters={"target": self.label, "results_dir": str(stage),
                                                **params},
                                    engine_name=engine.register(), progress_bar=False,
                                    cwd=str(NOTEBOOKS), kernel_name="python3")
                outcome = self.keep(chapter, run_id, stage, executed, inputs, started, t0)
            except PapermillExecutionError as exc:
                outcome = self.fail(chapter, run_id, t0, executed,
                                    f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}")
            except KeyboardInterrupt:
                # Ctrl-C or SIGTERM mid-chapter: the record says so, the target is reset
                # below, and the interrupt carries on to the caller (nothing else runs).
                self.fail(chapter, "interrupted", t0, None, "interrupted (Ctrl-C or SIGTERM) "
                          "before the chapter finished")
                raise
            except Exception as exc:        # provisioning, kernel death, papermill's own
                last = (str(exc).strip().splitlines() or [""])[-1]
                outcome = self.fail(chapter, run_id, t0, executed,
                                    f"{type(exc).__name__}: {last}")
        finally:
            if not was_up:
                self.reset()
        if outcome.status == "ran":
            # Kept: the run's Ansible artifacts (build/runs/<run id>/ansible/, scrubbed);
            # the rest of the staging directory is in the record and executed notebook now.
            for f in stage.iterdir():
                if f.name != "ansible":
                    shutil.rmtree(f, ignore_errors=True) if f.is_dir() else f.unlink()
            if not any(stage.iterdir()):
                stage.rmdir()
            timing = (store.committed(self.label, chapter.name, self.results) or {}) \
                .get("run", {}).get("timing", {})
            self.say(f"  done in {outcome.seconds:.0f}s (run {run_id}; measuring "
                     f"{timing.get('measured_s', 0):.0f}s of it)")
        return outcome

    def provision(self, chapter: Chapter, params: dict) -> str:
        spec = context.provision_spec(chapter.declaration,
                                      {**defaults(chapter.path), **params,
                                       "target": self.label})
        self._provision_s = 0.0
        if not spec:
            return ""
        t0 = time.monotonic()
        said = context.provision(self.target, spec)
        self._provision_s = time.monotonic() - t0
        self.say(f"  provisioned in {self._provision_s:.0f}s: {said}")
        return said

    def keep(self, chapter: Chapter, run_id: str, stage: Path, executed: Path,
             inputs: Inputs, started: str, t0: float) -> Outcome:
        import nbformat
        seconds = time.monotonic() - t0
        rec_file = stage / record.FILE
        if not rec_file.exists():
            return self.fail(chapter, run_id, t0, executed,
                             f"the notebook wrote no records ({record.FILE})")
        recs = record.read(rec_file)
        if not recs["finished"]:
            return self.fail(chapter, run_id, t0, executed,
                             "the notebook did not reach its end (run.finish())")
        # The parameters the record names are the ones papermill injected.
        injected = nbformat.read(executed, as_version=4).metadata["papermill"]["parameters"]
        given = {k: v for k, v in injected.items() if k not in ("target", "results_dir")}
        if given != inputs.parameters:
            raise RuntimeError(f"the runner's own error: papermill injected {given}, the "
                               f"inputs say {inputs.parameters}")
        header = recs["header"]
        doc = {"notebook": chapter.path.stem,
               # A variant's results are its own chapter's: its partials sit beside the
               # default run's.
               "chapter": header["chapter"] + (f".{chapter.variant}" if chapter.variant else ""),
               "run": provenance.provenance(run_id, inputs, header["kind"], started,
                                            record.now(), self.target.stand_ins()),
               "records": recs["records"]}
        # Where the chapter's time went: provisioning, the notebook, and inside it the
        # measurement windows the procedures reported (benchmark phases, idle baselines,
        # timed recoveries). bench/runbook_bench.py sums these.
        doc["run"]["timing"] = {
            "total_s": round(seconds, 1), "provision_s": round(self._provision_s, 1),
            # (at most the run: paired runs of two clusters may be reported one after another)
            "measured_s": round(min(seconds, profile.measured_seconds(recs["measured"])), 1)}
        store.save(self.label, chapter.name, doc, executed, self.results)
        return Outcome(chapter.name, "ran", seconds, run_id)

    def fail(self, chapter: Chapter, run_id: str, t0: float, executed: Path | None,
             error: str) -> Outcome:
        store.failed(self.label, chapter.name, run_id, error, executed, self.results)
        seconds = time.monotonic() - t0
        self.say(f"  FAILED after {seconds:.0f}s: {error}"
                 + (f"\n  executed notebook with the error: {executed}" if executed else ""))
        return Outcome(chapter.name, "failed", seconds, run_id, error)

    def reset(self) -> None:
        """A chapter that found the lab down leaves it down: whatever it left running (also
        when it failed half way) goes now. A real target is left alone."""
        from ..targets import playbooks
        # A kernel killed during a play leaves its Ansible artifacts (with the play's
        # environment) in memory; they go now, not at the next play.
        playbooks.clear_stale_artifacts()
        try:
            said = self.target.reset()
            if said:
                self.say(f"  {said}")
        except Exception as exc:  # report, never mask the chapter's own outcome
            self.say(f"  WARNING: clean-up after the run failed: {exc}")


# --- the runner as functions (the CLI, nbval's selection and tests use these) ------------------------
def run(target: str | Path = "lab", selected: list[str] | None = None, force: bool = False,
        parameters: dict | None = None, out=sys.stderr, results: Path = RESULTS,
        confirm: bool = False) -> list[Outcome]:
    parameters = dict(parameters or {})
    confirm = bool(parameters.pop("confirm", confirm))
    return Runner(target, confirm, results, out).run(selected, force, parameters)


def freshness(chapter: "Chapter | Path", target: str | Path = "lab",
              parameters: dict | None = None,
              results: Path = RESULTS) -> tuple[Inputs, str | None]:
    parameters = dict(parameters or {})
    confirm = bool(parameters.pop("confirm", False))
    return Runner(target, confirm, results).freshness(as_chapter(chapter), parameters)


def label(target: str | Path) -> str:
    """The name a target's results are filed under (its inventory directory's name)."""
    return inventory_mod.load(inventory_mod.resolve(target)).name

