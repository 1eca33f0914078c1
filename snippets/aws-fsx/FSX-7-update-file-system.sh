# Scale the file system: 5120 GiB, 4096 MBps, 160,000 provisioned SSD IOPS.
aws fsx update-file-system --region us-east-1 --file-system-id "$FSX_FILE_SYSTEM_ID" \
  --storage-capacity 5120 \
  --ontap-configuration 'ThroughputCapacity=4096,DiskIopsConfiguration={Mode=USER_PROVISIONED,Iops=160000}'
