# Repeat until Lifecycle is AVAILABLE.
aws fsx describe-file-systems --region us-east-1 --file-system-ids "$FSX_FILE_SYSTEM_ID"
