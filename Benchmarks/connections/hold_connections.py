#!/usr/bin/env python3
"""Hostile connections against `ecv serve`: N idle and N slow-header connections held for the whole
window (whatever the service cuts off at its header deadline is opened again, as an attacker would),
the slow ones sending one more header line every half second. Meanwhile a separate process times a
health check (GET /api/Queues on a new connection, to the last byte of the answer) every 100 ms. At
the end every connection is closed and the service's descriptor count is followed back to baseline.

A benchmark: it prints and writes figures, it asserts nothing.

usage: hold_connections.py (--ecv PATH | --port P --pid PID) [--count 1000] [--seconds 25]
                           [--interval 0.1] [--results DIR] [--no-publish]

--ecv starts `PATH serve --open-agents` on a free port (and stops it afterwards); otherwise an
already running service is measured. Results: <results>/connections-<timestamp>.{json,md} and
connections-latest.{json,md} (default Benchmarks/results).
"""
import argparse, collections, datetime, json, multiprocessing, os, platform, resource, selectors, socket, subprocess, sys, time

def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))

def health(port, path="/api/Queues"):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return (time.monotonic() - start) * 1000, data.split(b"\r\n", 1)[0].decode(errors="replace")

def health_checks(port, interval, stop_at, results, path="/api/Queues"):
    """Runs in its own process, so the holder's work never delays a measurement."""
    samples = []
    next_at = time.monotonic()
    while time.monotonic() < stop_at:
        at = time.monotonic()
        try:
            samples.append(health(port, path) + (at,))
        except OSError as error:
            samples.append((None, f"error: {error}", at))
        next_at += interval
        time.sleep(max(0, next_at - time.monotonic()))
    results.put(samples)

def percentile(sorted_values, percent):
    """Nearest rank: always a value that was measured."""
    index = max(0, min(len(sorted_values) - 1, int(-(-percent * len(sorted_values) // 100)) - 1))
    return sorted_values[index]

class Holder:
    def __init__(self, port, count):
        self.port, self.count = port, count
        self.selector = selectors.DefaultSelector()
        self.idle, self.slow = set(), set()
        self.reopened = 0
        self.cut_times = []

    def open(self, kind):
        # From many loopback addresses (127.0.1.x), as from many clients: one address may keep
        # only 256 connections waiting (limits.maxWaitingConnectionsPerAddress).
        self.opened = getattr(self, "opened", 0) + 1
        source = (f"127.0.1.{1 + self.opened % 250}", 0)
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10, source_address=source)
        s.setblocking(False)
        if kind == "slow":
            s.sendall(b"GET /api/Queues HTTP/1.1\r\nHost: h\r\n")
        (self.slow if kind == "slow" else self.idle).add(s)
        self.selector.register(s, selectors.EVENT_READ, kind)

    def fill(self):
        while len(self.idle) < self.count: self.open("idle")
        while len(self.slow) < self.count: self.open("slow")

    def drip(self):
        for s in list(self.slow):
            try: s.send(b"X-Drip: 1\r\n")
            except OSError: self.drop(s, "slow")

    def drop(self, s, kind):
        try: self.selector.unregister(s)
        except (KeyError, ValueError): pass
        s.close()
        (self.slow if kind == "slow" else self.idle).discard(s)

    def reap(self, timeout):
        """Connections the service closed are opened again."""
        for key, _ in self.selector.select(timeout):
            s, kind = key.fileobj, key.data
            try: data = s.recv(4096)
            except BlockingIOError: continue
            except OSError: data = b""
            if not data:
                self.drop(s, kind)
                self.reopened += 1
                self.cut_times.append(time.monotonic())

    def close_all(self):
        for s in list(self.idle): self.drop(s, "idle")
        for s in list(self.slow): self.drop(s, "slow")

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ecv")
    parser.add_argument("--port", type=int)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=25)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--results", default="Benchmarks/results")
    parser.add_argument("--no-publish", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.count + 256)), hard))

    server = None
    if args.ecv:
        probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
        server = subprocess.Popen([args.ecv, "serve", "--open-agents", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pid = server.pid
        deadline = time.monotonic() + 20
        while True:
            try:
                health(port); break
            except OSError:
                if time.monotonic() > deadline: sys.exit("the service did not start")
                time.sleep(0.1)
    else:
        if not (args.port and args.pid): parser.error("--ecv, or --port and --pid")
        port, pid = args.port, args.pid
    load_start = os.getloadavg()
    started = time.monotonic()
    for _ in range(3): health(port)  # warm-up
    baseline = fds(pid)

    holder = Holder(port, args.count)
    holder.fill()
    results = multiprocessing.Queue()
    stop_at = time.monotonic() + args.seconds
    checker = multiprocessing.Process(target=health_checks, args=(port, args.interval, stop_at, results))
    checker.start()
    held_fds = []
    next_drip = time.monotonic()
    while time.monotonic() < stop_at:
        now = time.monotonic()
        if now >= next_drip:
            holder.drip()
            holder.fill()
            held_fds.append(fds(pid))
            next_drip = now + 0.5
        holder.reap(max(0, min(next_drip, stop_at) - time.monotonic()))
    samples = results.get()
    checker.join()
    holder.close_all()
    # Back to baseline: the service sees every close at once.
    closed_at = time.monotonic()
    after = fds(pid)
    while after > baseline and time.monotonic() - closed_at < 15:
        time.sleep(0.05)
        after = fds(pid)
    settle = time.monotonic() - closed_at
    load_end = os.getloadavg()
    if server:
        server.terminate(); server.wait(timeout=20)

    times = sorted(ms for ms, _, _ in samples if ms is not None)
    statuses = sorted({status for _, status, _ in samples})
    failed = sum(1 for ms, status, _ in samples if ms is None or not status.startswith("HTTP/1.1 200"))
    figures = {
        "connections": {"idle": args.count, "slowHeader": args.count},
        "seconds": args.seconds, "reopenedAfterCutOff": holder.reopened,
        "healthChecks": {"count": len(samples), "failed": failed, "statuses": statuses,
                         "p50Ms": percentile(times, 50), "p99Ms": percentile(times, 99), "maxMs": times[-1],
                         "over100Ms": sum(1 for t in times if t > 100)},
        "series": [[round(at - started, 3), None if ms is None else round(ms, 2)] for ms, _, at in samples],
        # Connections the service cut, per second of the run.
        "cutOffsPerSecond": {str(second): count for second, count in sorted(
            collections.Counter(int(at - started) for at in holder.cut_times).items())},
        "fds": {"baseline": baseline, "whileHeldMedian": sorted(held_fds)[len(held_fds) // 2], "whileHeldMax": max(held_fds),
                "after": after, "backToBaselineSeconds": round(settle, 2)},
    }
    report = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "kernel": platform.release(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "loadAverage": list(load_start)},
        "service": args.ecv or f"pid {pid}",
        "method": (f"{args.count} idle and {args.count} slow-header connections (request line and Host, then one header line "
                   "every 0.5 s, never the blank line) held for the whole window: those the service cuts off at its header "
                   "deadline are opened again. A separate process sends GET /api/Queues on a new connection every "
                   f"{int(args.interval * 1000)} ms and times it to the last byte of the answer. Descriptors: /proc/<pid>/fd "
                   "before, every 0.5 s while held, and after every client connection closed (followed until back to "
                   "baseline, at most 15 s). Percentiles: nearest rank."),
        "figures": figures,
        "load": {"start": load_start[0], "end": load_end[0], "wallSeconds": round(time.monotonic() - started, 1)},
    }
    h, f = figures["healthChecks"], figures["fds"]
    lines = [
        f"# `ecv serve` under hostile connections, {report['machine']['date']}", "",
        f"Service: `{report['service']}`; {report['machine']['cores']} cores, load average at start "
        + " / ".join(f"{value:.2f}" for value in load_start) + ".", "",
        report["method"], "",
        "| held | health checks | p50 ms | p99 ms | max ms | over 100 ms | fds before | fds while held (median / max) | fds after | back to baseline |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {args.count} idle + {args.count} slow-header, {args.seconds:.0f} s ({holder.reopened} reopened after cut-off) "
        f"| {h['count']} ({h['failed']} failed) | {h['p50Ms']:.1f} | {h['p99Ms']:.1f} | {h['maxMs']:.1f} | {h['over100Ms']} "
        f"| {f['baseline']} | {f['whileHeldMedian']} / {f['whileHeldMax']} | {f['after']} | {f['backToBaselineSeconds']:.2f} s |", "",
        f"Load average (1 min) {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; took {report['load']['wallSeconds']:.0f} s.", "",
    ]
    markdown = "\n".join(lines)
    print(markdown)
    if not args.no_publish:
        publish(args.results, "connections", report, markdown)

def publish(results, prefix, report, markdown):
    """<results>/<prefix>-<timestamp>.{json,md} and <prefix>-latest.{json,md}."""
    os.makedirs(results, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for name in (f"{prefix}-{stamp}", f"{prefix}-latest"):
        base = os.path.join(results, name)
        with open(base + ".json", "w") as out: json.dump(report, out, indent=2, sort_keys=True)
        with open(base + ".md", "w") as out: out.write(markdown)
        print(f"wrote {base}.json, {base}.md", file=sys.stderr)

if __name__ == "__main__":
    main()
