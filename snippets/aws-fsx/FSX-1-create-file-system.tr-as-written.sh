# FSX-1 exactly as TR-4947 prints it (placeholders as variables), kept to show why the guide
# changed it: AWS has no deployment type MULTI_AZ_HA_1, and the file system would be created
# in us-east-2 while every later step looks for it in us-east-1.
aws fsx create-file-system --region us-east-2  --storage-capacity 2048 --subnet-ids "$SUBNET_ID_1" "$SUBNET_ID_2" --file-system-type ONTAP --ontap-configuration DeploymentType=MULTI_AZ_HA_1,ThroughputCapacity=2048,PreferredSubnetId=${SUBNET_ID_1},FsxAdminPassword=${FSXADMIN_PASSWORD},DiskIopsConfiguration="{Mode=USER_PROVISIONED,Iops=40000"}
