"""Chapter logic, written once for any target: everything a notebook's steps do.

A notebook holds its parameters, attaches to its run (:func:`attach`, tr4947.procedures.context)
and calls into the chapter's module here; each step runs through the Target only (so it runs
on the lab and on a reader's cluster alike, and a dry run plans instead of changing), prints
what a reader needs to see, and records what the guide shows (tr4947.procedures.record: the
one place recording happens, verdicts included). One module per chapter:

    functional_validation   FV-1..FV-8: the silly-rename fix
    broker_recovery         REC-1..REC-3: replacing a failed broker, DAS vs shared volume
    cpu_utilization         CPU-1, CPU-2: broker CPU per producer rate
    storage_efficiency      EFF-1, EFF-2
    cvo, fsx, aff           the cloud and on-premises storage chapters
    performance             the benchmark cluster and OMB runs of CVO-7, FSX-6, AFF-5/6
    preflight               PRE-1, PRE-2: is a cluster's storage safe for Kafka, and the fix
    sizing                  SIZ-1: the formula, and the storage write test behind it
    omb                     OpenMessaging Benchmark on a target's client, as the TR runs it
"""
from .context import ChapterRun, attach

__all__ = ["ChapterRun", "attach"]
