"""Times aiortc's own VP8 and H.264 encoders on raw I420 frames from a file.

The file is the one bench-encode dumps and encodes itself (Benchmarks/run.sh passes it here), so
both sides encode exactly the same pixels at the same size and bitrate. Each `encoder.encode(frame)`
call is timed with perf_counter_ns (wall) and process_time_ns (CPU of every thread, which counts
libvpx/x264 worker threads too). Calls are paced at 30 fps like a camera unless --unpaced.
Writes JSON that `bench-encode report --aiortc FILE` merges into the results.
"""

import argparse
import fractions
import json
import sys
import time

import aiortc
import av
from aiortc.codecs.h264 import H264Encoder
from aiortc.codecs.vpx import Vp8Encoder

FRAME_INTERVAL_NS = 1_000_000_000 // 30
TIME_BASE = fractions.Fraction(1, 90000)


def make_frame(data: bytes, width: int, height: int, index: int) -> av.VideoFrame:
    """An av.VideoFrame holding one I420 frame, copied plane by plane (PyAV may pad rows)."""
    frame = av.VideoFrame(width, height, "yuv420p")
    offset = 0
    for plane_index, (plane_width, plane_height) in enumerate(
        [(width, height), (width // 2, height // 2), (width // 2, height // 2)]
    ):
        plane = frame.planes[plane_index]
        size = plane_width * plane_height
        source = data[offset : offset + size]
        offset += size
        if plane.line_size == plane_width:
            plane.update(source)
        else:
            padding = bytes(plane.line_size - plane_width)
            plane.update(b"".join(
                source[row * plane_width : (row + 1) * plane_width] + padding for row in range(plane_height)
            ))
    frame.pts = index * 3000
    frame.time_base = TIME_BASE
    return frame


def run(encoder, frames_file: str, width: int, height: int, count: int, paced: bool):
    frame_size = width * height * 3 // 2
    wall_ms, cpu_ns = [], 0
    with open(frames_file, "rb") as handle:
        start = time.perf_counter_ns()
        for index in range(count):
            data = handle.read(frame_size)
            if len(data) != frame_size:
                sys.exit(f"{frames_file} ended before frame {index}")
            frame = make_frame(data, width, height, index)
            if paced:
                delay = start + index * FRAME_INTERVAL_NS - time.perf_counter_ns()
                if delay > 0:
                    time.sleep(delay / 1e9)
            cpu_before = time.process_time_ns()
            before = time.perf_counter_ns()
            payloads, _ = encoder.encode(frame)
            after = time.perf_counter_ns()
            cpu_ns += time.process_time_ns() - cpu_before
            if not payloads and index == 0:
                sys.exit(f"{type(encoder).__name__} produced nothing for the first frame")
            wall_ms.append((after - before) / 1e6)
    return wall_ms, cpu_ns / 1e6 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames-file", required=True)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--kbps", type=int, default=800)
    parser.add_argument("--unpaced", action="store_true", help="encode back to back instead of at 30 fps")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    results = []
    for codec, make in [("VP8", Vp8Encoder), ("H264", H264Encoder)]:
        encoder = make()
        encoder.target_bitrate = args.kbps * 1000
        wall_ms, cpu_ms = run(encoder, args.frames_file, args.width, args.height, args.count, not args.unpaced)
        # The settings aiortc 1.16 hard-codes in its encoders (aiortc/codecs/vpx.py, h264.py).
        settings = ("libvpx via PyAV, cpu-used=-6, deadline=realtime, CBR" if codec == "VP8"
                    else "libx264 via PyAV, default preset (medium), tune=zerolatency, Baseline")
        threads = encoder.codec.thread_count if encoder.codec is not None else None
        implementation = f"aiortc {aiortc.__version__}: {make.__name__} ({settings}, threads={threads or 'auto'})"
        results.append({"codec": codec, "implementation": implementation, "encode_ms": wall_ms, "cpu_ms_per_frame": cpu_ms})
        wall_sorted = sorted(wall_ms)
        print(f"aiortc {codec}: {len(wall_ms)} frames, p50 {wall_sorted[(len(wall_sorted) + 1) // 2 - 1]:.2f} ms, "
              f"CPU {cpu_ms:.2f} ms/frame", flush=True)

    with open(args.out, "w") as handle:
        json.dump({"aiortc": aiortc.__version__, "av": av.__version__, "frames": args.count, "width": args.width,
                   "height": args.height, "kbps": args.kbps, "paced": not args.unpaced, "results": results}, handle)


if __name__ == "__main__":
    main()
