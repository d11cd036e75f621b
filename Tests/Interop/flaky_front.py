#!/usr/bin/env python3
"""A TCP front for the reconnection tests: real sockets between the SDK and the service that fail
on purpose. It forwards every connection to --upstream, except:

  --drop-first N         the first N connections are closed right after accept (nothing forwarded)
  --lose-response TEXT   the first request whose bytes contain TEXT reaches the service, but its
                         answer is swallowed and the client's connection closed (an answer lost
                         on the way back), --lose-count times (default 1)

It prints "listening <port>" once ready, and one line per connection it dropped or cut.
"""
import argparse
import socket
import sys
import threading

lock = threading.Lock()


def log(text):
    with lock:
        print(text, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True, help="host:port of the service")
    parser.add_argument("--drop-first", type=int, default=0)
    parser.add_argument("--lose-response", default=None)
    parser.add_argument("--lose-count", type=int, default=1)
    args = parser.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    upstream = (host, int(port))
    budget = {"drop": args.drop_first, "lose": args.lose_count if args.lose_response else 0}

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    log(f"listening {listener.getsockname()[1]}")

    def claim(kind):
        with lock:
            if budget[kind] > 0:
                budget[kind] -= 1
                return True
            return False

    def serve(client):
        if claim("drop"):
            client.close()
            log("dropped a connection")
            return
        try:
            server = socket.create_connection(upstream, timeout=10)
        except OSError as error:
            log(f"upstream unreachable: {error}")
            client.close()
            return
        server.settimeout(None)
        cut = threading.Event()

        def pump(source, target, inspect):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    if inspect and args.lose_response and args.lose_response.encode() in data and claim("lose"):
                        cut.set()
                        log("losing the answer to " + args.lose_response)
                    if not inspect and cut.is_set():
                        # The service answered the marked request: swallow it and hang up on the client.
                        log("answer swallowed")
                        break
                    target.sendall(data)
            except OSError:
                pass
            finally:
                for sock in (source, target):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        threads = [threading.Thread(target=pump, args=(client, server, True), daemon=True),
                   threading.Thread(target=pump, args=(server, client, False), daemon=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        client.close()
        server.close()

    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
