# Write throughput of one broker's log volume. Run it on every broker at the same time: the
# sum is what the storage absorbs for the whole cluster, max(t_storage) x #brokers.
# 1 GiB of sequential 1 MiB writes, flushed to storage (conv=fdatasync) before dd stops the clock.
: "${SIZE_MB:=1024}"
dd if=/dev/zero of=/mnt/data/kafka/siz-1-write.tmp bs=1M count="$SIZE_MB" conv=fdatasync
rm -f /mnt/data/kafka/siz-1-write.tmp
