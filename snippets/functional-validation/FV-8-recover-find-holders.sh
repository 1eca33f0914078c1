# Which leftover hidden files are there, and which processes still hold them open?
# (.nfs<file id><counter>, as the Linux NFS client names them; the lab's client layer does too.)
: "${DATA_DIR:=/demo/broker_demo_1}"
shopt -s nullglob
hidden=("$DATA_DIR"/__a_demo_topic-*/.nfs*)
ls -la "${hidden[@]}"
# fuser lists each file's users; its complaints about processes it may not inspect are dropped.
fuser -v "${hidden[@]}" 2>&1 | grep -v '^Cannot stat'
