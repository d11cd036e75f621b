#!/usr/bin/env python3
"""A peerjs-py peer (PyPI `peerjs-py`, a Python port of the PeerJS client on aiortc) on a PeerJS
server: calls `--call PEER` (and opens a data connection to it, sending `--data TEXT`), or answers
calls and data connections (echoing each text as "echo: TEXT"), sending aiortc's test video and
audio and counting the remote video frames it decodes. After `--duration` seconds of media it
prints ONE JSON line on stdout (ok, framesDecoded, calls, streams, received, sent, errors) and
exits: 0 when media arrived, 1 otherwise. Progress goes to stderr (`open`, `stream`, `data`).

peerjs-py 0.1.1 needs an explicit id (it opens the socket before asking the server for one) and
pins pyee<13 while aiortc 1.16 needs pyee>=13: it is installed with --no-deps (Makefile).
"""
import argparse
import asyncio
import json
import logging
import sys

from aiortc.mediastreams import AudioStreamTrack, MediaStreamError, VideoStreamTrack
from peerjs_py.peer import Peer


def progress(text):
    print(text, file=sys.stderr, flush=True)


async def run(args):
    result = {"ok": False, "framesDecoded": 0, "calls": 0, "streams": 0, "received": [], "sent": [], "errors": []}
    first_media = asyncio.Event()
    peer = Peer(args.id, {"host": args.host, "port": args.port, "path": args.path, "key": args.key, "secure": False})
    opened = asyncio.Event()
    peer.on("open", lambda *_: opened.set())
    peer.on("error", lambda error: result["errors"].append(str(error)))
    consumers = []

    async def consume(track):
        while True:
            try:
                await track.recv()
            except MediaStreamError:
                return
            result["framesDecoded"] += 1
            first_media.set()

    def on_stream(track):  # peerjs-py emits every remote track as "track" ("stream" for audio only)
        if getattr(track, "kind", None) == "video":
            result["streams"] += 1
            progress("stream")
            consumers.append(asyncio.ensure_future(consume(track)))

    def watch_data(connection):
        def on_data(data):
            text = data if isinstance(data, str) else json.dumps(data)
            result["received"].append(text)
            progress("data " + text)
            if not text.startswith("echo: "):
                reply = "echo: " + text
                asyncio.ensure_future(connection.send(reply))
                result["sent"].append(reply)
        connection.on("data", on_data)

    async def on_call(call):
        result["calls"] += 1
        call.on("track", on_stream)
        await call.answer([VideoStreamTrack(), AudioStreamTrack()])

    peer.on("call", lambda call: asyncio.ensure_future(on_call(call)))
    peer.on("connection", watch_data)
    await peer.start()
    await asyncio.wait_for(opened.wait(), args.timeout)
    progress("open")
    if args.call:
        call = await peer.call(args.call, [VideoStreamTrack(), AudioStreamTrack()])
        result["calls"] += 1
        call.on("track", on_stream)
        if args.data:
            connection = await peer.connect(args.call, {"serialization": args.serialization})
            watch_data(connection)
            for _ in range(100):
                if getattr(connection, "open", False):
                    break
                await asyncio.sleep(0.1)
            await connection.send(args.data)
            result["sent"].append(args.data)
    try:
        await asyncio.wait_for(first_media.wait(), args.timeout)
        await asyncio.sleep(args.duration)
    except asyncio.TimeoutError:
        result["errors"].append("no media within %s s" % args.timeout)
    result["ok"] = result["framesDecoded"] > 0
    print(json.dumps(result), flush=True)
    for consumer in consumers:
        consumer.cancel()
    try:
        await asyncio.wait_for(peer.destroy(), 5)
    except Exception as error:  # a teardown that fails changes nothing in the summary already printed
        progress("destroy: %s" % error)
    return 0 if result["ok"] else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/peerjs")
    parser.add_argument("--key", default="peerjs")
    parser.add_argument("--id", required=True)
    parser.add_argument("--call", default=None)
    parser.add_argument("--data", default=None)
    parser.add_argument("--serialization", default="json")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.CRITICAL, stream=sys.stderr)
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
