# A live but hung engine: listens on the socket named by argv[1], accepts
# every connection and never answers, until the command after "--" ends.
import socket, subprocess, sys, threading

path = sys.argv[1]
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(8)
held = []
threading.Thread(target=lambda: [held.append(server.accept()) for _ in iter(int, 1)], daemon=True).start()
rc = subprocess.call(sys.argv[sys.argv.index("--") + 1:])
sys.exit(rc)
