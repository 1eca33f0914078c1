# What broker 1 logged about the moved partitions (run on the broker host).
grep -E "DirectoryNotEmptyException|Stopping serving logs in dir|Shutdown broker because all log dirs" \
  logs/server.log | tail -n 20
