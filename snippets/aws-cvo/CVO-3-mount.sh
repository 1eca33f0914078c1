# After the CVO-3 lines are in /etc/fstab: create the mount points, mount, check.
mkdir -p /kafka_aggr3_vol1 /kafka_aggr3_vol2 /kafka_aggr3_vol3 \
         /kafka_aggr22_vol1 /kafka_aggr22_vol2 /kafka_aggr22_vol3
mount -a
df -h
