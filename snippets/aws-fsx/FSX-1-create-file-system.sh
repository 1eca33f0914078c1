# Multi-AZ FSx for ONTAP file system: 2048 GiB SSD, 2048 MBps, 40,000 provisioned SSD IOPS.
# SUBNET_ID_1 (preferred) and SUBNET_ID_2 are two subnets in different AZs;
# FSXADMIN_PASSWORD comes from the environment or ansible-vault, never from a file in git.
# The ONTAP configuration, password included, reaches the AWS CLI in a file only this user can
# read (file://, made by mktemp, removed on exit), not as an argument: any user on the host
# can read a command's arguments with `ps`.
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
printf '%s' "DeploymentType=MULTI_AZ_1,ThroughputCapacity=2048,PreferredSubnetId=${SUBNET_ID_1},FsxAdminPassword=${FSXADMIN_PASSWORD},DiskIopsConfiguration={Mode=USER_PROVISIONED,Iops=40000}" > "$cfg"
aws fsx create-file-system --region us-east-1 \
  --storage-capacity 2048 \
  --subnet-ids "$SUBNET_ID_1" "$SUBNET_ID_2" \
  --file-system-type ONTAP \
  --ontap-configuration "file://$cfg"
