#!/usr/bin/env python3
"""Deflate bombs against `ecv serve`'s PeerJS server (issue #38, item 4): N WebSocket clients each
negotiate permessage-deflate and send one compressed frame of ~62 KB (under the 64 KiB frame bound
as sent) that inflates to 9.8 MB of one letter. The server inflates with its own bound and closes
each socket with 1009 once 64 KiB came out (libsoup 3.2 checked the compressed size and inflated the
whole frame: 20 of them took the server from 39 to 271 MB and an id 4.4 s to fetch). Meanwhile a
separate process fetches a fresh id (GET /peerjs/<key>/id on a new connection, to the last byte)
every 20 ms for a 3 s window from the first bomb on, and the service's RSS is read from /proc every 50 ms.

A benchmark: it prints and writes figures, it asserts nothing. The bar the issue sets: RSS within a
stated bound (here: growth over the warm-up round) and every id served in < 50 ms meanwhile.

usage: deflate_bomb.py --ecv PATH [--bombs 20] [--interval 0.02] [--window 3] [--results DIR] [--no-publish]

--ecv starts `PATH serve --open-agents --peer-key demo` on a free port and stops it afterwards. Results:
<results>/deflate-bomb-<timestamp>.{json,md} and deflate-bomb-latest.{json,md} (default Benchmarks/results).
"""
import argparse, base64, datetime, multiprocessing, os, platform, socket, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hold_connections import health_checks, percentile, publish  # noqa: E402 (the same timed fetch, another path)
from hold_connections import health as fetch  # noqa: E402

ID_PATH = "/peerjs/demo/id"

REPEATS = 38_000  # 258 bytes per 13 bits: 9.8 MB inflated from ~62 KB


def deflate_bomb(repeats):
    """A raw deflate stream (fixed Huffman codes, RFC 1951 §3.2.6): "a", then `repeats` copies of 258
    bytes at distance 1 (as PeerServerTests builds it)."""
    out, current, used = bytearray(), 0, 0

    def bit(value):
        nonlocal current, used
        current |= (value & 1) << used
        used += 1
        if used == 8:
            out.append(current)
            current, used = 0, 0

    def code(value, bits):
        for index in reversed(range(bits)):
            bit(value >> index)

    bit(1); bit(1); bit(0)
    code(0x30 + 0x61, 8)
    for _ in range(repeats):
        code(0xC0 + 5, 8)
        code(0, 5)
    code(0, 7)
    if used:
        out.append(current)
    return bytes(out)


def frame(payload):
    """One masked client frame: FIN, RSV1 (compressed), text."""
    mask = os.urandom(4)
    head = bytearray([0xC1])
    if len(payload) < 126:
        head.append(0x80 | len(payload))
    elif len(payload) < 1 << 16:
        head += bytes([0x80 | 126]) + len(payload).to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + len(payload).to_bytes(8, "big")
    return bytes(head) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def bomb(port, number, payload):
    """Upgrades with permessage-deflate, sends the frame, reads until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /peerjs/peerjs?key=demo&id=bomb{number}&token=t0k3n HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                return "closed before the upgrade"
            reply += chunk
        negotiated = b"permessage-deflate" in reply.split(b"\r\n\r\n", 1)[0]
        s.sendall(payload)
        rest = reply.split(b"\r\n\r\n", 1)[1]
        while chunk := s.recv(65536):
            rest += chunk
        close = rest.find(b"\x88")
        code = int.from_bytes(rest[close + 2:close + 4], "big") if close >= 0 and len(rest) >= close + 4 else None
        return f"deflate {'negotiated' if negotiated else 'refused'}, closed with {code}"


def rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ecv", required=True)
    parser.add_argument("--bombs", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--window", type=float, default=3.0, help="seconds of id fetches from the first bomb on")
    parser.add_argument("--results", default="Benchmarks/results")
    parser.add_argument("--no-publish", action="store_true")
    args = parser.parse_args()

    probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
    server = subprocess.Popen([args.ecv, "serve", "--open-agents", "--peer-key", "demo", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            fetch(port, ID_PATH); break
        except OSError:
            if time.monotonic() > deadline: sys.exit("the service did not start")
            time.sleep(0.1)
    load_start = os.getloadavg()
    payload = frame(deflate_bomb(REPEATS))
    # Warm-up: the first socket and the first inflater, then the baseline.
    warm = bomb(port, 0, payload)
    for _ in range(5): fetch(port, ID_PATH)
    baseline = rss(server.pid)

    # The ids are fetched for a window the bombs fit in (about a second at load 15).
    results = multiprocessing.Queue()
    fetcher = multiprocessing.Process(target=health_checks, args=(port, args.interval, time.monotonic() + args.window, results, ID_PATH))
    fetcher.start()
    memory, sampling = [], threading.Event()

    def sample_memory():
        while not sampling.is_set():
            memory.append(rss(server.pid))
            time.sleep(0.05)
    sampler = threading.Thread(target=sample_memory); sampler.start()
    started = time.monotonic()
    outcomes = [bomb(port, number, payload) for number in range(1, args.bombs + 1)]
    bombing = time.monotonic() - started
    samples = results.get(); fetcher.join()
    sampling.set(); sampler.join()
    after = rss(server.pid)
    load_end = os.getloadavg()
    server.terminate(); server.wait(timeout=20)

    times = sorted(ms for ms, _, _ in samples if ms is not None)
    failed = sum(1 for ms, status, _ in samples if ms is None or not status.startswith("HTTP/1.1 200"))
    figures = {
        "bombs": args.bombs, "compressedBytes": len(payload), "inflatedBytesEach": 1 + 258 * REPEATS,
        "warmUp": warm, "outcomes": sorted(set(outcomes)), "bombingSeconds": round(bombing, 2),
        "rss": {"baselineMiB": round(baseline / 2**20, 1), "maxMiB": round(max(memory) / 2**20, 1),
                "afterMiB": round(after / 2**20, 1), "maxGrowthKiB": (max(memory) - baseline) // 1024},
        "ids": {"count": len(samples), "failed": failed, "p50Ms": round(percentile(times, 50), 2),
                "p99Ms": round(percentile(times, 99), 2), "maxMs": round(times[-1], 2),
                "over50Ms": sum(1 for t in times if t > 50)},
    }
    report = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "kernel": platform.release(),
                    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "loadAverage": list(load_start)},
        "service": args.ecv,
        "method": (f"{args.bombs} WebSocket clients one after another, each negotiating permessage-deflate and sending one "
                   f"compressed text frame of {len(payload)} bytes that inflates to {1 + 258 * REPEATS} bytes; the server's "
                   "answer is read to its close. A separate process fetches GET /peerjs/demo/id on a new connection every "
                   f"{int(args.interval * 1000)} ms for {args.window:g} s from the first bomb on, timed to the last byte; RSS (/proc/<pid>/status VmRSS) every 50 ms, growth "
                   "over the value after one warm-up bomb. Percentiles: nearest rank."),
        "figures": figures,
        "load": {"start": load_start[0], "end": load_end[0]},
    }
    r, i = figures["rss"], figures["ids"]
    lines = [
        f"# Deflate bombs against `ecv serve`'s peer server, {report['machine']['date']}", "",
        f"Service: `{report['service']}`; {report['machine']['cores']} cores, load average at start {load_start[0]:.2f}, end {load_end[0]:.2f}.", "",
        report["method"], "",
        "| bombs | each: sent → inflated | server's answer | RSS baseline / max / after | max growth | ids fetched | id p50 / p99 / max | ids over 50 ms |",
        "| ---: | --- | --- | --- | ---: | ---: | --- | ---: |",
        f"| {args.bombs} | {len(payload):,} B → {1 + 258 * REPEATS:,} B | {'; '.join(figures['outcomes'])} | "
        f"{r['baselineMiB']} / {r['maxMiB']} / {r['afterMiB']} MiB | {r['maxGrowthKiB']} KiB | {i['count']} ({i['failed']} failed) | "
        f"{i['p50Ms']} / {i['p99Ms']} / {i['maxMs']} ms | {i['over50Ms']} |", "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_publish:
        publish(args.results, "deflate-bomb", report, text + "\n")

if __name__ == "__main__":
    main()
