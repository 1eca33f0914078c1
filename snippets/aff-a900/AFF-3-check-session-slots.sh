# After the nfs module has been reloaded (or the host rebooted): the slot count in effect.
cat /sys/module/nfs/parameters/max_session_slots
