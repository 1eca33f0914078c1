"""Chapter logic, written once for any target: what a notebook's steps do beyond running one
snippet (repeat a proposal until it moves broker 1's replicas, replace a broker and time it,
measure broker CPU over a benchmark's window...).

A procedure takes a Target (tr4947.targets) and the notebook's Recorder, runs its steps
through the Target only (so it runs on the lab and on a reader's cluster alike, and a dry
run plans instead of changing), and records what the guide shows. One module per chapter:

    functional_validation   FV-1..FV-8: the silly-rename fix
    broker_recovery         REC-1..REC-3: replacing a failed broker, DAS vs shared volume
    cpu_utilization         CPU-1, CPU-2: broker CPU per producer rate
    storage_efficiency      EFF-1, EFF-2
    performance             the benchmark cluster and OMB runs of CVO-7, FSX-6, AFF-5/6
    fsx                     FSX-1..FSX-5: the file system, SVM and volumes through the AWS CLI
    sizing                  SIZ-1: the storage write test behind the formula
"""
