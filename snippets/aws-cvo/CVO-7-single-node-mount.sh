# Moving a broker from the HA pair's volumes to the single node's (Kafka stopped first):
# with the single-node lines in /etc/fstab, unmount the old volumes, mount the new ones, check.
umount -a -t nfs,nfs4
mkdir -p /kafka_aggr2_vol1 /kafka_aggr2_vol2 /kafka_aggr2_vol3 \
         /kafka_aggr2_vol4 /kafka_aggr2_vol5 /kafka_aggr2_vol6
mount -a
df -h
