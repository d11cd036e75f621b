#!/usr/bin/env python3
"""Holds N idle and N slow-header connections against a running `ecv serve` and measures what a
health check (GET /api/Queues) costs meanwhile, and the service's descriptor count before, while
and after (from /proc/<pid>/fd). A benchmark: it prints figures, it asserts nothing.

usage: hold_connections.py --port P --pid PID [--count 1000] [--seconds 14]
"""
import argparse, os, socket, time

def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))

def health(port):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /api/Queues HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return (time.monotonic() - start) * 1000, data.split(b"\r\n", 1)[0].decode()

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=14)
    args = parser.parse_args()
    baseline = fds(args.pid)
    idle = [socket.create_connection(("127.0.0.1", args.port)) for _ in range(args.count)]
    slow = [socket.create_connection(("127.0.0.1", args.port)) for _ in range(args.count)]
    for s in slow:
        s.sendall(b"GET /api/Queues HTTP/1.1\r\nHost: h\r\n")
    held = fds(args.pid)
    samples = []
    start = time.monotonic()
    while time.monotonic() - start < args.seconds:
        for s in slow:
            try: s.sendall(b"X-Drip: 1\r\n")
            except OSError: pass
        samples.append(health(args.port))
        time.sleep(0.5)
    closed = 0
    for s in idle + slow:
        s.settimeout(0.2)
        try:
            if s.recv(1) == b"": closed += 1
        except OSError:
            closed += 1
    for s in idle + slow: s.close()
    time.sleep(1)
    after = fds(args.pid)
    times = sorted(ms for ms, _ in samples)
    statuses = sorted({status for _, status in samples})
    print(f"connections held: {args.count} idle + {args.count} slow-header")
    print(f"service fds: baseline {baseline}, while held {held}, after {after}")
    print(f"closed by the service within {args.seconds:.0f} s: {closed} of {2 * args.count}")
    print(f"health checks: {len(times)}, {statuses}, p50 {times[len(times) // 2]:.1f} ms, max {times[-1]:.1f} ms")

if __name__ == "__main__":
    main()
