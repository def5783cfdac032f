# The agent's starting point: it delivers a reproduce.sh that regenerates results/.
echo "not implemented" >&2
exit 1
