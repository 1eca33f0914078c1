# Partition directories of __a_demo_topic in broker 1's log dir, including "-delete" ones
# and hidden files (.nfsXXXX on an NFSv3 mount).
: "${DATA_DIR:=/demo/broker_demo_1}"
ls -la "$DATA_DIR"/ | grep __a_demo_topic
ls -la "$DATA_DIR"/__a_demo_topic-*
