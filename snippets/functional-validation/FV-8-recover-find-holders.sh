# Which leftover hidden files are there, and which processes still hold them open?
# (.nfsXXXX on a real NFS client; .fuse_hidden* on the lab's FUSE mounts.)
: "${DATA_DIR:=/demo/broker_demo_1}"
shopt -s nullglob
hidden=("$DATA_DIR"/__a_demo_topic-*/.nfs* "$DATA_DIR"/__a_demo_topic-*/.fuse_hidden*)
ls -la "${hidden[@]}"
# fuser lists each file's users; its complaints about processes it may not inspect are dropped.
fuser -v "${hidden[@]}" 2>&1 | grep -v '^Cannot stat'
