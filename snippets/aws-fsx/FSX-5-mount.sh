# On each broker: create the mount points, mount everything in /etc/fstab, show the result.
mkdir -p /mnt/kafkafsxN1 /mnt/kafkafsxN2 /mnt/kafkafsxN3 /mnt/kafkafsxN4 /mnt/kafkafsxN5 /mnt/kafkafsxN6
mount -a
df -h
