aws fsx --region us-east-1 create-storage-virtual-machine --name svmkafkatest \
  --file-system-id "$FSX_FILE_SYSTEM_ID"
