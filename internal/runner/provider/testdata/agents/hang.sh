# An agent that never finishes.
echo "thinking..."
sleep 600
