"""Measurements the why-NetApp chapters make on a target: broker CPU by process (cpu),
broker recovery time from log lines and from the cluster's ISR view (recovery), and
storage efficiency as ONTAP reports it, with the TR's own arithmetic checked (efficiency).
Each module does one measurement; the notebooks combine them with the Target API."""
