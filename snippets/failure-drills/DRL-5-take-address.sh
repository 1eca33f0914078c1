# On the standby, once the cluster has fenced the failed broker: take over its address and
# announce it (gratuitous ARP), as REC-2 does.
: "${DEV:=eth0}" "${ADDRESS:=198.18.4.1/16}"
ip addr add "$ADDRESS" dev "$DEV"
arping -q -U -c 2 -I "$DEV" "${ADDRESS%/*}"
ip -brief addr show dev "$DEV"
