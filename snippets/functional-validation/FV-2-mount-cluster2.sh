# Cluster 2 brokers: a generic export without preserve-unlink, mounted over NFSv3.
: "${NFS_EXPORT:=198.18.10.12:/generic_nfsv3_vol}"
mkdir -p /demo
mount -t nfs -o vers=3 "$NFS_EXPORT" /demo
mount | grep ' /demo '
