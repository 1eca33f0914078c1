# Log in to the file system's management endpoint as fsxadmin and run one harmless command.
ssh fsxadmin@"$FSX_MANAGEMENT_IP" version
