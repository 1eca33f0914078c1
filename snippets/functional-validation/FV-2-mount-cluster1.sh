# Cluster 1 brokers: ONTAP volume with preserve-unlink, mounted over NFSv4.1.
: "${NFS_EXPORT:=198.18.10.11:/kafka_fg_vol01}"
mkdir -p /demo
mount -t nfs -o vers=4.1 "$NFS_EXPORT" /demo
mount | grep ' /demo '
