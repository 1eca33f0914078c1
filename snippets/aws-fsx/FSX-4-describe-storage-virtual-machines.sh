# Repeat until Lifecycle is CREATED; Endpoints.Nfs.IpAddresses is the NFS address for FSX-5.
aws fsx describe-storage-virtual-machines --region us-east-1 \
  --storage-virtual-machine-ids "$FSX_SVM_ID"
