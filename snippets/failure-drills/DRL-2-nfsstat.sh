# On the NFS broker: the client's RPC counters; "retrans" counts the requests sent again after
# the connection to the LIF dropped.
nfsstat -c | head -n 3
