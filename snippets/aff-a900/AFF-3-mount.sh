mkdir -p /data/kafka_fg_vol01
mount -t nfs -o vers=4.1,nconnect=16 198.18.10.11:/kafka_fg_vol01 /data/kafka_fg_vol01
